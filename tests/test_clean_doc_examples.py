"""The docstring examples of the clean/select modules run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "whileai._pure.hack_text",
    "whileai._pure.ngram",
    "whileai._pure.normalize",
    "whileai._pure.scan",
    "whileai._pure.tokenize",
    "whileai._pure.trace",
    *(f"whileai.simulations.clean.{name}" for name in (
        "decontam", "decontam_index", "decontam_stream", "leakage", "hack_features",
        "hack_matrix", "hack_pools", "hack_scan", "hack_report", "style", "trace_flags",
        "grounding", "leak", "markers", "hack_columns", "hints", "claims",
        "trace_batch",
    )),
    *(f"whileai.simulations.select.{name}" for name in ("hygiene", "optimize", "pairs", "gate")),
    "whileai.simulations.measure.holdout",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
