"""Benchmarks: workloads built with symscan, run side by side with reference loops."""
