"""Evaluators of FunctionGraphs: the reference interpreter (the oracle) and, later, others."""
