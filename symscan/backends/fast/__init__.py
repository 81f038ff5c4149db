"""The fast evaluator: a graph, loops included, compiled once into straight-line Python."""

from symscan.backends.fast.evaluator import FastEvaluator

__all__ = ["FastEvaluator"]
