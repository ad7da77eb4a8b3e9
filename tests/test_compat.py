"""The deprecated names `zeroproof` and `zeroproof_simulations` are the whileai modules."""

from __future__ import annotations

import importlib
import pickle
import sys

import pytest

import whileai
import whileai.rows.schema
import whileai.simulations


@pytest.fixture(autouse=True)
def _fresh_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget earlier imports of the old names so each test sees the first-import warning."""
    for name in list(sys.modules):
        if name.split(".")[0] in {"zeroproof", "zeroproof_simulations"}:
            monkeypatch.delitem(sys.modules, name)


def test_import_zeroproof_warns_and_is_whileai() -> None:
    with pytest.warns(DeprecationWarning, match="`zeroproof` package is now `whileai`"):
        zeroproof = importlib.import_module("zeroproof")
    assert zeroproof is whileai
    assert sys.modules["zeroproof"] is whileai


def test_zeroproof_submodules_are_the_same_module_objects() -> None:
    with pytest.warns(DeprecationWarning, match="is now"):
        importlib.import_module("zeroproof")
    simulations = importlib.import_module("zeroproof.simulations")
    schema = importlib.import_module("zeroproof.rows.schema")
    assert simulations is whileai.simulations
    assert schema is whileai.rows.schema
    assert sys.modules["zeroproof.simulations"] is whileai.simulations
    assert simulations.Task is whileai.simulations.Task
    assert whileai.simulations.__spec__ is not None
    assert whileai.simulations.__spec__.name == "whileai.simulations", "the alias keeps its spec"


def test_import_zeroproof_simulations_warns_and_is_whileai_simulations() -> None:
    with pytest.warns(DeprecationWarning, match="`zeroproof_simulations` package is now") as seen:
        legacy = importlib.import_module("zeroproof_simulations")
    assert len(seen) == 1, "one warning naming the package the caller imported"
    assert legacy is whileai.simulations
    assert importlib.import_module("zeroproof.rows.schema") is whileai.rows.schema


def test_objects_made_through_the_old_name_pickle_as_whileai() -> None:
    with pytest.warns(DeprecationWarning, match="is now"):
        legacy = importlib.import_module("zeroproof_simulations")
    task = legacy.Task(prompt="hi")
    assert isinstance(task, whileai.rows.schema.Task)
    assert pickle.loads(pickle.dumps(task)) == task


def test_a_missing_submodule_under_the_old_name_is_an_import_error() -> None:
    with pytest.warns(DeprecationWarning, match="is now"):
        importlib.import_module("zeroproof")
    with pytest.raises(ImportError, match=r"zeroproof\.no_such_module"):
        importlib.import_module("zeroproof.no_such_module")


def test_the_alias_finder_is_installed_once() -> None:
    for _ in range(2):
        with pytest.warns(DeprecationWarning, match="is now"):
            importlib.import_module("zeroproof")
        sys.modules.pop("zeroproof")
    finders = [f for f in sys.meta_path if getattr(f, "zeroproof_alias", False)]
    assert len(finders) == 1
