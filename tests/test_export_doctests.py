"""The `>>>` examples in the export modules run (vf_env needs verifiers and has none)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["checklist", "environment", "hf", "preference", "template", "training", "trl", "wire"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(f"whileai.simulations.export.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
