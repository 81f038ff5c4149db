"""The numba backend: the fast evaluator's code, with loops compiled by numba (extra ``numba``)."""

from symscan.backends.numba.evaluator import LoopReport, NumbaEvaluator

__all__ = ["LoopReport", "NumbaEvaluator"]
