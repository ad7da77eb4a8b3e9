"""The module paths the product documents name import the real modules (one table, aliases.py)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from whileai.simulations.aliases import ALIASES


@pytest.mark.parametrize("documented", sorted(ALIASES))
def test_a_documented_path_is_the_real_module(documented: str) -> None:
    alias = importlib.import_module(documented)
    real = importlib.import_module(ALIASES[documented])
    assert alias is real
    assert real.__spec__ is not None
    assert real.__spec__.name == real.__name__


def test_the_spec_forms_work_as_written_in_a_fresh_interpreter() -> None:
    code = (
        "from whileai.simulations.score.grade_llm import warm_judge\n"
        "import whileai.simulations.score.judging as j\n"
        "from whileai.simulations.schema import Task, Rollout, Judgment, Marker\n"
        "from whileai.simulations.verify import MathEqual\n"
        "import whileai.simulations.judge.judging as real\n"
        "assert j is real and callable(warm_judge)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_an_unknown_old_path_still_fails() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("whileai.simulations.score.nothing_here")
