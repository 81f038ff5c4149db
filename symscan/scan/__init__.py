"""Symbolic loops: scan, map, reduce, foldl, foldr, until, and the Scan op."""

from symscan.scan.args import ScanArgs
from symscan.scan.basic import scan
from symscan.scan.checkpoints import scan_checkpoints
from symscan.scan.ifelse import IfElse, ifelse
from symscan.scan.info import ScanInfo
from symscan.scan.op import Scan
from symscan.scan.until import until
from symscan.scan.updates import ScanUpdates
from symscan.scan.views import foldl, foldr, map, reduce

__all__ = ["IfElse", "Scan", "ScanArgs", "ScanInfo", "ScanUpdates", "foldl", "foldr", "ifelse", "map", "reduce", "scan",
           "scan_checkpoints", "until"]
