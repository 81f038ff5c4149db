"""symscan's graph rewriter: a registry of rules and an engine that applies them.

A top-level package (as the design asks); ``symscan`` imports it once, absolutely. A
user's own ``rewrites.py`` on the path must not shadow it.
"""

# Importing the rule modules registers their rules.
from rewrites import (  # noqa: F401
    broadcast_lengths,
    canonicalize,
    constant_folding,
    delayed_states,
    disjoint_increments,
    fusion,
    ifelse,
    inplace,
    merge,
    merge_inouts,
    push_out_dot_sum,
    push_out_non_seq,
    push_out_output,
    push_out_row_shapes,
    push_out_seq,
    remove_unused,
    save_mem,
    scan_merge,
    scan_to_accumulate,
    scan_to_linear_recurrence,
)
from rewrites.engine import Record, RewriteReport, rewrite_graph
from rewrites.registry import PHASES, REGISTRY, Declined, Rewrite, Rewritten, register, select

__all__ = ["PHASES", "REGISTRY", "Declined", "Record", "Rewrite", "RewriteReport", "Rewritten", "register",
           "rewrite_graph", "select"]
