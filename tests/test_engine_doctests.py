"""The ``>>>`` examples in the engine's modules run and pass."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "whileai._pure.select",
    "whileai.simulations.data",
    "whileai.simulations.generate.agents",
    "whileai.simulations.generate.diversity",
    "whileai.simulations.generate.drafts",
    "whileai.simulations.generate.grid",
    "whileai.simulations.generate.privileged",
    "whileai.simulations.generate.seeded",
    "whileai.simulations.generate.writer",
    "whileai.simulations.run.allocation",
    "whileai.simulations.run.config",
    "whileai.simulations.run.record",
    "whileai.simulations.run.sizing",
    "whileai.simulations.run.source",
    "whileai.simulations.simulation",
    "whileai.simulations.spec",
    "whileai.simulations.world.mock",
    "whileai.simulations.world.rollout",
    "whileai.simulations.world.state",
    "whileai.simulations.world.values",
]


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
    assert result.attempted > 0

