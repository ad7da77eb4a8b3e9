"""The row contract (schema v1): typed views of a row and the checks that guard it.

On the wire a row is a plain JSON dict (``docs/rows.md``). It is a projection of four objects:
``Task`` (the situation), ``Rollout`` (one episode), ``Judgment`` (a scorer's verdict) and
``Marker`` (one behavior measurement); a publish-gate stamp reads back as ``Calibration``.
``from_row`` splits a row into them and ``to_row`` flattens them back, so that
``to_row(from_row(row)) == row`` for every valid row.

Round-trip rules: a field that is ``None`` is absent from the row. A known key the row holds with
an explicit ``null`` (and an empty ``markers`` dict) is carried verbatim in ``Rollout.extra``, as
are all unknown keys; ``extra["calibration"]`` holds a ``Calibration``.

>>> parts = from_row({"schema_version": "1", "prompt": "Where is 4412?", "reward": 1.0})
>>> parts.task.prompt, parts.judgment.reward
('Where is 4412?', 1.0)
>>> to_row(parts)
{'schema_version': '1', 'prompt': 'Where is 4412?', 'reward': 1.0}
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple

from whileai.errors import RowError
from whileai.rows.fields import SUPPORTED_VERSIONS, check_calibration, describe
from whileai.rows.fields import row_problems as _row_problems

__all__ = [
    "SCHEMA_VERSION",
    "STYLE_MARKERS",
    "TRACE_MARKERS",
    "Calibration",
    "Judgment",
    "Marker",
    "Rollout",
    "RowParts",
    "Task",
    "calibration_of",
    "from_row",
    "row_problems",
    "row_schema",
    "schema_version_of",
    "to_row",
    "validate",
]

SCHEMA_VERSION = "1"

# Marker names stamped by the package's own checks; any other name is judge-emitted.
TRACE_MARKERS = frozenset({
    "honest_claims", "reported_failure", "no_test_tampering", "no_suppression", "no_bypass",
    "no_destructive", "no_secrets",
})
STYLE_MARKERS = frozenset({
    "no_boilerplate", "no_hedging", "no_apology", "no_sycophancy", "answered",
})


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """The situation: what was asked, in which world, and what only the teacher may see."""

    scenario_id: str | None = None
    task_id: str | None = None
    prompt: str | None = None
    dimensions: dict[str, Any] | None = None  # row key `scenario_dimensions`
    world_state: dict[str, Any] | None = None
    faults: tuple[dict[str, Any], ...] | None = None
    privileged: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Rollout:
    """One episode of the agent on a task; ``extra`` keeps every other key of the row."""

    rollout_index: int | None = None
    steps: tuple[dict[str, Any], ...] | None = None
    final_text: str | None = None
    messages: tuple[dict[str, Any], ...] | None = None
    seeded: tuple[str, ...] | None = None
    usage: dict[str, Any] | None = None
    logprob: float | None = None
    n_tokens: int | None = None
    model_version: str | None = None
    sampling: dict[str, Any] | None = None
    truncated: bool | None = None
    finish_reason: str | None = None
    schema_version: str | None = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgment:
    """A scorer's verdict on one rollout, with its provenance and any hand label."""

    reward: float | None = None
    reason: str | None = None
    judge_name: str | None = None
    judge_status: str | None = None  # ok, missing_reward, invalid_result, error, timeout
    judge_meta: dict[str, Any] | None = None
    lineage: dict[str, Any] | None = None
    label_source: str | None = None
    gold_reward: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Marker:
    """One behavior measurement on a row; 1.0 is the good outcome.

    ``family`` says who writes it: ``trace`` and ``style`` for the package's own checks,
    ``judge`` for a judge's custom markers. It is inferred from the name (rows store values).
    """

    name: str
    value: float | None
    family: str = "judge"


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """The publish gate's stamp: the task's pass rate over ``k`` graded repeats."""

    pass_rate: float | None = None
    k: int | None = None
    ci95: tuple[float, float] | None = None
    policy: str | None = None
    mean_kl: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "calibration") -> Calibration:
        """Read a stamp dict; raise ``RowError`` naming the bad field.

        >>> Calibration.from_dict({"pass_rate": 0.5, "k": 4, "ci95": [0.2, 0.8]}).ci95
        (0.2, 0.8)
        """
        problems: list[str] = []
        check_calibration(where, data, problems)
        if problems:
            raise RowError("; ".join(problems) + ". Fix the stamp or re-run the publish gate.")
        known = {f.name for f in fields(cls)} - {"extra"}
        ci95 = data.get("ci95")
        return cls(
            pass_rate=data.get("pass_rate"),
            k=data.get("k"),
            ci95=None if ci95 is None else (ci95[0], ci95[1]),
            policy=data.get("policy"),
            mean_kl=data.get("mean_kl"),
            extra={k: copy.deepcopy(v) for k, v in data.items()
                   if k not in known or data[k] is None},
        )

    def to_dict(self) -> dict[str, Any]:
        """The stamp as a JSON-able dict (``None`` fields left out, ``extra`` keys kept).

        >>> Calibration(pass_rate=0.5, k=4).to_dict()
        {'pass_rate': 0.5, 'k': 4}
        """
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out = {k: (list(v) if isinstance(v, tuple) else v) for k, v in out.items() if v is not None}
        out.update(copy.deepcopy(self.extra))
        return out


class RowParts(NamedTuple):
    """A row split into its objects; unpacks as ``task, rollout, judgment, markers``."""

    task: Task
    rollout: Rollout
    judgment: Judgment | None
    markers: tuple[Marker, ...]


# Row key -> (object, attribute). Keys in _LIST_KEYS are lists on the wire, tuples in memory.
_TASK_KEYS = {"scenario_id": "scenario_id", "task_id": "task_id", "prompt": "prompt",
              "scenario_dimensions": "dimensions", "world_state": "world_state",
              "faults": "faults", "privileged": "privileged"}
_ROLLOUT_KEYS = {k: k for k in ("rollout_index", "steps", "final_text", "messages", "seeded",
                                "usage", "logprob", "n_tokens", "model_version", "sampling",
                                "truncated", "finish_reason")}
_JUDGMENT_KEYS = {f.name: f.name for f in fields(Judgment)}
_LIST_KEYS = frozenset({"faults", "steps", "messages", "seeded"})


def marker_family(name: str) -> str:
    """Which family writes a marker of this name: ``trace``, ``style`` or ``judge``."""
    if name in TRACE_MARKERS:
        return "trace"
    return "style" if name in STYLE_MARKERS else "judge"


def row_problems(row: Any) -> list[str]:
    """List every way ``row`` breaks schema v1; empty when it is valid.

    >>> row_problems({"prompt": "hi", "reward": "high"})
    ["field `reward`: expected a number or null, got str 'high'"]
    """
    return _row_problems(row)


def validate(row: Any, *, where: str = "row") -> None:
    """Raise ``RowError`` listing every problem of ``row``; ``where`` names it (e.g. ``rows[3]``).

    >>> validate({"prompt": "hi", "reward": 1.0})
    >>> validate({"prompt": "hi", "reward": "1"}, where="rows[3]")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    whileai.errors.RowError: rows[3] breaks row schema v1: field `reward`: ...
    """
    problems = _row_problems(row)
    if problems:
        raise RowError(
            f"{where} breaks row schema v1: " + "; ".join(problems)
            + ". Fix the code that produced it (docs/rows.md lists every field)."
        )


def schema_version_of(row: Mapping[str, Any]) -> str:
    """The row's schema version: its ``schema_version`` stamp, or ``"0"`` for an unstamped row.

    >>> schema_version_of({"prompt": "hi"}), schema_version_of({"schema_version": "1"})
    ('0', '1')
    """
    version = row.get("schema_version")
    if version is None and "schema_version" not in row:
        return "0"
    if isinstance(version, str) and version in SUPPORTED_VERSIONS:
        return version
    raise RowError(
        f"field `schema_version`: {describe(version)} is not a version this whileai reads "
        f"({', '.join(SUPPORTED_VERSIONS)}); upgrade whileai, or stamp the string '1'."
    )


@lru_cache(maxsize=1)
def _schema_text() -> str:
    shipped = resources.files("whileai") / "simulations" / "schemas" / "row-v1.json"
    return shipped.read_text("utf-8")


def row_schema() -> dict[str, Any]:
    """The packaged JSON Schema (draft 2020-12) of a v1 row, as a fresh dict.

    >>> row_schema()["$schema"]
    'https://json-schema.org/draft/2020-12/schema'
    """
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


def calibration_of(row: Mapping[str, Any]) -> Calibration | None:
    """The row's publish-gate stamp, typed; ``None`` when it has none.

    >>> calibration_of({"calibration": {"pass_rate": 0.75, "k": 4}}).k
    4
    """
    value = row.get("calibration")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise RowError(f"field `calibration`: expected an object (dict), got {describe(value)}")
    return Calibration.from_dict(value)


def _take(row: Mapping[str, Any], keys: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, attr in keys.items():
        value = row.get(key)
        if value is not None:
            out[attr] = tuple(value) if key in _LIST_KEYS else value
    return out


def from_row(row: Mapping[str, Any], *, where: str = "row") -> RowParts:
    """Split a row into ``RowParts(task, rollout, judgment, markers)`` (deep copies).

    Raises ``RowError`` (naming ``where`` and the field) when the row breaks the schema.
    ``judgment`` is ``None`` when no judgment key holds a value.

    >>> task, rollout, judgment, markers = from_row({"prompt": "hi", "markers": {"answered": 1.0}})
    >>> judgment is None, markers
    (True, (Marker(name='answered', value=1.0, family='style'),))
    """
    validate(row, where=where)
    row = copy.deepcopy(dict(row))
    known = set(_TASK_KEYS) | set(_ROLLOUT_KEYS) | set(_JUDGMENT_KEYS) | {"markers"}
    extra = {k: v for k, v in row.items()
             if k not in known or v is None or (k == "markers" and not v)}
    extra.pop("schema_version", None)
    if isinstance(extra.get("calibration"), Mapping):
        extra["calibration"] = Calibration.from_dict(extra["calibration"])
    judged = _take(row, _JUDGMENT_KEYS)
    markers = tuple(Marker(name=name, value=value, family=marker_family(name))
                    for name, value in (row.get("markers") or {}).items())
    return RowParts(
        task=Task(**_take(row, _TASK_KEYS)),
        rollout=Rollout(**_take(row, _ROLLOUT_KEYS), extra=extra,
                        schema_version=row.get("schema_version")),
        judgment=Judgment(**judged) if judged else None,
        markers=markers,
    )


def _put(out: dict[str, Any], obj: Any, keys: Mapping[str, str]) -> None:
    for key, attr in keys.items():
        value = getattr(obj, attr)
        if value is not None:
            out[key] = list(value) if key in _LIST_KEYS else value


def to_row(
    task: Task | RowParts,
    rollout: Rollout | None = None,
    judgment: Judgment | None = None,
    markers: Iterable[Marker] = (),
) -> dict[str, Any]:
    """Flatten the objects (or one ``RowParts``) back into a row dict (a deep copy).

    Typed fields win over a same-named key in ``rollout.extra``. A missing ``rollout`` stamps
    the current ``SCHEMA_VERSION``. Raises ``RowError`` on a repeated marker name.

    >>> to_row(Task(prompt="hi"), Rollout(final_text="ok"), Judgment(reward=0.0))
    {'schema_version': '1', 'prompt': 'hi', 'final_text': 'ok', 'reward': 0.0}
    """
    if isinstance(task, RowParts):
        if rollout is not None or judgment is not None or markers != ():
            raise TypeError("to_row(parts) takes no other arguments; pass parts alone")
        task, rollout, judgment, markers = task
    rollout = rollout if rollout is not None else Rollout()
    out: dict[str, Any] = {}
    if rollout.schema_version is not None:
        out["schema_version"] = rollout.schema_version
    _put(out, task, _TASK_KEYS)
    _put(out, rollout, _ROLLOUT_KEYS)
    if judgment is not None:
        _put(out, judgment, _JUDGMENT_KEYS)
    scores: dict[str, float | None] = {}
    for marker in markers:
        if marker.name in scores:
            raise RowError(
                f"marker {marker.name!r} is given twice; one row holds one value per marker name"
            )
        scores[marker.name] = marker.value
    if scores:
        out["markers"] = scores
    for key, value in rollout.extra.items():
        if key not in out and key != "schema_version":
            out[key] = value.to_dict() if isinstance(value, Calibration) else value
    return copy.deepcopy(out)
