"""Measuring: pass@k with intervals, comparisons, deltas and power."""
