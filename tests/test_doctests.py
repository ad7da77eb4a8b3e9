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
# Modules whose examples are part of their documentation: one losing all of them fails here.
MUST_HAVE_EXAMPLES = frozenset({
    "whileai._pure.embed", "whileai._pure.hash", "whileai._pure.rng", "whileai._pure.tokenize",
    "whileai.commands.traces", "whileai.simulations.ingest.dimensions",
    "whileai.simulations.ingest.from_traces", "whileai.simulations.ingest.harness",
    "whileai.simulations.ingest.messages", "whileai.simulations.ingest.mining",
    "whileai.simulations.ingest.otel", "whileai.simulations.ingest.otlp",
    "whileai.simulations.ingest.report", "whileai.simulations.ingest.steps",
    "whileai.simulations.ingest.traces", "whileai.simulations.models.embedders",
})


def test_the_walk_finds_the_package() -> None:
    assert {"whileai.simulations.clean.decontam", "whileai._pure.scan",
            "whileai.server.services.otlp"} <= set(MODULES)
    assert set(MODULES) >= MUST_HAVE_EXAMPLES  # a module renamed is renamed here too


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0 or name not in MUST_HAVE_EXAMPLES
