"""Judging: the judge contract, LLM judges and rubrics, verifiers, probes and judge trust."""
