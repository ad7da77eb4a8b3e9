"""simulate()'s aliases are one table; its docstring and docs/simulate.md show that table."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

import whileai.simulations as zps
from whileai.errors import ConfigError
from whileai.simulations.play.config import ALIAS_TABLE, ALIASES, fold_aliases

DOCS = Path(__file__).resolve().parent.parent / "docs" / "simulate.md"


def test_the_table_is_read_only_and_the_mapping_is_its_view() -> None:
    assert dict(ALIASES) == {old: new for old, new, _ in ALIAS_TABLE}
    with pytest.raises(TypeError):
        ALIASES["x"] = "y"  # type: ignore[index]


def test_docstring_and_docs_show_every_row() -> None:
    doc = zps.simulate.__doc__ or ""
    page = DOCS.read_text(encoding="utf-8")
    for old, new, _ in ALIAS_TABLE:
        assert re.search(rf"^\s*{old}\s+{new}\s*$", doc, re.M), old
        assert f"| `{old}` | `{new}` |" in page, old


def test_folding_keeps_the_messages() -> None:
    assert fold_aliases({"policy": "P", "system_prompt": None}) == {"system_prompt": "P"}
    with pytest.raises(ConfigError, match=r"risk= and fault_rate= disagree"):
        fold_aliases({"fault_rate": 0.1, "risk": 0.2})


def test_no_parameter_is_typed_object() -> None:
    hints = typing.get_type_hints(zps.simulate)
    assert [name for name, hint in hints.items() if hint is object] == []
    assert False in typing.get_args(hints["simulator"]) or any(
        False in typing.get_args(arg) for arg in typing.get_args(hints["simulator"]))
