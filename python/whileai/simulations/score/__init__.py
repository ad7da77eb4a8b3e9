"""Scoring: judges, verifiers, pass@k, comparisons, judge trust, curriculum and lineage."""
