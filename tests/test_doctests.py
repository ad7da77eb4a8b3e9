"""Every ``>>>`` example in the package runs and shows what it says, on both backends.

The modules are found, not listed, so a new module's examples are checked from its first commit.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import whileai

# `python -m whileai` runs the CLI on import; Alembic's env script runs only inside Alembic.
_NOT_IMPORTABLE = {"whileai.__main__", "whileai.server.migrations.env"}
MODULES = sorted(
    info.name for info in pkgutil.walk_packages(whileai.__path__, "whileai.")
    if info.name not in _NOT_IMPORTABLE
)


def test_the_walk_finds_the_package() -> None:
    assert {"whileai.simulations.clean.decontam", "whileai._pure.scan",
            "whileai.server.services.otlp"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
