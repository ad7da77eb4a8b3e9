"""A run's identity: a fingerprint of everything that changes what a row would be.

Every row ``simulate`` makes carries ``run_fingerprint``: one short digest per part (tools,
system prompt, spec, mode, seed, writer, agent, grader, grid knobs, package version) and an
``id`` over all of them. A re-run with the same ``output=`` reuses only rows with the same
fingerprint; ``differences`` names the parts that differ, so the refusal can say which.
What only decides how long or how fast a run goes (``budget``, ``time_budget``, concurrency,
progress) is not part of it: raising the budget resumes the same run.

>>> a = fingerprint_of({"tools": "[]", "system_prompt": "Be kind.", "mode": "rl", "seed": 0})
>>> b = fingerprint_of({"tools": "[]", "system_prompt": "Be brief.", "mode": "rl", "seed": 0})
>>> differences(a, b), describe(differences(a, b), a, b)
(['system_prompt'], 'system prompt differs')
>>> differences(a, dict(a))
[]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from whileai import _backend
from whileai._version import __version__
from whileai.simulations.generate.grid import default_axes

__all__ = [
    "FIELD", "LABELS", "describe", "differences", "fingerprint_of", "run_fingerprint",
]

FIELD = "run_fingerprint"  # the row key
# part -> how a message names it; in the order a message lists them
LABELS: dict[str, str] = {
    "tools": "tools", "system_prompt": "system prompt", "spec": "spec", "mode": "mode",
    "seed": "seed", "writer": "writer", "agent": "agent", "grader": "grader",
    "grid": "grid knobs", "version": "package version",
}
_SHOWN = frozenset({"mode", "seed", "writer", "agent", "version"})  # kept readable, not hashed


def _digest(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return format(_backend.hash64(text), "016x")


def fingerprint_of(parts: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint of named parts: readable ones as they are, the rest as digests, and
    ``id`` over all of them.

    >>> fingerprint_of({"mode": "rl", "seed": 3})["seed"]
    3
    """
    out: dict[str, Any] = {k: (v if k in _SHOWN else _digest(v)) for k, v in parts.items()}
    return {"id": _digest(out), **out}


def _identity(party: Any) -> str | None:
    """A party's name plus the knobs that change its output (a wrapper is looked through)."""
    if party is None:
        return None
    while hasattr(party, "inner"):  # LimitedAgent and other pass-through wrappers
        party = party.inner
    name = getattr(party, "name", None)
    if not isinstance(name, str) or not name:
        name = getattr(party, "__qualname__", None) or type(party).__name__
    knobs = [f"{k}={getattr(party, k)!r}" for k in ("rate", "seed")
             if isinstance(getattr(party, k, None), int | float)]
    return " ".join([name, *knobs])


def _release(version: str) -> str:
    """``major.minor``: a patch release does not change rows."""
    return ".".join(version.split(".")[:2])


def _chosen_axes(spec: Any, grid: Any) -> list[list[Any]]:
    """The grid axes chosen for this run (``dimensions=``, the traces' aim): those that differ
    from the ones the tools and system prompt give, which their own parts already cover."""

    derived = {axis: list(values) for axis, values in default_axes(spec).items()}
    return [[axis, list(values)] for axis, values in grid.axes
            if derived.get(axis) != list(values)]


def run_fingerprint(inputs: Any, *, repeats: int) -> dict[str, Any]:
    """The fingerprint of one run's resolved inputs (``run.engine.RunInputs``); ``repeats`` is
    the k the run plays (``tasks=`` may set it rather than the knob)."""
    spec, cfg, grid = inputs.spec, inputs.cfg, inputs.grid
    knobs = {k: getattr(cfg, k) for k in (
        "phrasings", "unique", "situations", "until", "fault_rate", "repeat_policy",
        "logprobs", "embedder", "embed_dim", "avg_turns", "probe")}
    knobs["repeats"] = repeats
    grader = [_identity(inputs.grader), _identity(inputs.finish)]
    return fingerprint_of({
        "tools": [t.to_openai() for t in spec.tools],
        "system_prompt": spec.policy,
        "spec": {"situations": list(spec.situations), "rubric": spec.rubric},
        "mode": cfg.mode,
        "seed": cfg.seed,
        "writer": _identity(inputs.writer),
        "agent": _identity(inputs.agent),
        "grader": grader,
        "grid": {"knobs": knobs, "axes": _chosen_axes(spec, grid)},
        "version": _release(__version__),
    })


def differences(stored: Any, current: Mapping[str, Any]) -> list[str]:
    """The parts where ``stored`` (a row's fingerprint) differs from ``current``, in
    ``LABELS`` order; every part when ``stored`` is not a fingerprint."""
    if not isinstance(stored, Mapping):
        return [k for k in current if k != "id"]
    if stored.get("id") == current.get("id"):
        return []
    keys = [k for k in LABELS if k in current or k in stored]
    keys += sorted(k for k in {*current, *stored} if k not in LABELS and k != "id")
    return [k for k in keys if stored.get(k) != current.get(k)]


def describe(keys: list[str], stored: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    """The parts that differ in words; a readable part shows both values.

    >>> describe(["mode", "tools"], {"mode": "rl"}, {"mode": "sft"})
    "mode ('rl' there, 'sft' now), tools differ"
    """
    shown = [f"{LABELS.get(k, k)} ({stored.get(k)!r} there, {current.get(k)!r} now)"
             if k in _SHOWN else LABELS.get(k, k) for k in keys]
    return ", ".join(shown) + (" differs" if len(shown) == 1 else " differ")
