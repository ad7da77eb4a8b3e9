"""``push()`` is written once: the run and the graded set share one method and one docstring."""

from __future__ import annotations

import inspect

import whileai.simulations as zps


def test_run_and_graded_set_share_one_push() -> None:
    assert zps.SimulationData.push is zps.ScoredData.push
    params = list(inspect.signature(zps.ScoredData.push).parameters)
    assert params[:2] == ["self", "name"]
    assert len(params) == 15  # self, name and the 13 options
    assert "keep_privileged" in (zps.SimulationData.push.__doc__ or "")
