"""Measuring: pass@k with intervals, comparisons, deltas, power, benchmarks, holdouts."""
