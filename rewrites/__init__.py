"""symscan's graph rewriter: a registry of rules and an engine that applies them.

A top-level package (as the design asks); ``symscan`` imports it once, absolutely. A
user's own ``rewrites.py`` on the path must not shadow it.
"""

# Importing the rule modules registers their rules.
from rewrites import merge  # noqa: F401  (the scan rules are registered once integrated)
from rewrites.engine import Record, RewriteReport, rewrite_graph
from rewrites.registry import PHASES, REGISTRY, Declined, Rewrite, register, select

__all__ = ["PHASES", "REGISTRY", "Declined", "Record", "Rewrite", "RewriteReport", "register",
           "rewrite_graph", "select"]
