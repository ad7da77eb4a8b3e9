"""The judge contract: how any callable becomes a reward on a row.

A judge is any callable ``judge(row)`` that returns one of:

- a bare number (``0``, ``1``, ``0.7``): the reward;
- a dict with ``"reward"`` and optionally ``"reason"`` (kept on the row), ``"markers"``
  (``{name: float}``, merged into ``row["markers"]``, 1.0 = good), ``"failure_class"``, and
  anything else (kept in ``row["judge_meta"]``).

Rewards live in [0, 1]. With ``scale=(lo, hi)`` (a Likert judge) the judge's number is a rating:
it is kept as ``row["rating"]`` and the reward is ``(rating - lo) / (hi - lo)``. A bool is read as
0/1 and noted in ``judge_meta["coerced"]``.

Nothing is silently scored zero. Each graded row gets ``judge_status``:

==================  ==========================================================================
``ok``              the reward is on the row
``missing_reward``  the judge returned ``None`` or a dict without a ``reward``
``invalid_result``  a string, list, NaN/inf, or a number outside [0, 1] (or outside ``scale``)
``error``           the judge raised; ``reason`` names the exception
``timeout``         the judge did not answer within ``timeout`` seconds (it runs in a worker
                    thread that is abandoned, so a hung judge never hangs the run)
==================  ==========================================================================

and on every status except ``ok`` the reward is ``None``. Every graded row also carries
``judge_name``, ``judge_meta`` (with ``version``) and ``lineage`` (``source`` is ``grade`` for
``run_judge`` / ``data.grade`` and ``eval`` for ``evaluate``).

The loop: ``run_judge(rows, judge)`` (or ``data.grade(judge=judge)``) returns a ``ScoredData`` of
graded copies; ``scored.passes()`` feeds an export; ``evaluate(rollouts, judge, model=...)``
grades held-out rollouts; ``evaluate(...).failed_traces()`` aims the next ``simulate``.

>>> scored = run_judge([{"prompt": "p", "final_text": "ok"}], lambda row: 1)
>>> scored.rows[0]["reward"], scored.rows[0]["judge_status"]
(1.0, 'ok')
>>> run_judge([{"prompt": "p"}], lambda row: "yes").rows[0]["judge_status"]
'invalid_result'
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from numbers import Real
from typing import Any

from whileai.errors import ConfigError, JudgeError
from whileai.rows.keywords import valid_kwargs
from whileai.rows.progress import Progress
from whileai.rows.source import as_rows
from whileai.secrets import mask_secrets
from whileai.simulations.judge.scored import ScoredData

__all__ = [
    "DEFAULT_TIMEOUT",
    "JUDGE_STATUSES",
    "evaluate",
    "judge_name_of",
    "judge_row",
    "run_judge",
]

DEFAULT_TIMEOUT = 120.0
JUDGE_STATUSES = ("ok", "missing_reward", "invalid_result", "error", "timeout")
_CORE_KEYS = ("reward", "reason", "markers", "failure_class")
_GRADE_KEYS = ("reward", "reason", "rating", "failure_class", "judge_status", "judge_name")


def judge_name_of(judge: Any) -> str:
    """A readable name for a judge callable (``name`` attribute, function name or class).

    >>> judge_name_of(len)
    'len'
    """
    name = getattr(judge, "name", None)
    if isinstance(name, str) and name:
        return name
    fn_name = getattr(judge, "__name__", None)
    if isinstance(fn_name, str) and fn_name:
        return fn_name
    return type(judge).__name__


def _call_with_deadline(judge: Callable[[Any], Any], row: Any, timeout: float | None) -> Any:
    """Call ``judge(row)``; raise TimeoutError when it does not return within ``timeout``."""
    if timeout is None:
        return judge(row)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = judge(row)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="whileai-judge", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(f"judge did not answer within {timeout:g}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _interpret(
    result: Any, scale: tuple[float, float] | None
) -> tuple[str, float | None, dict[str, Any], str]:
    """Return (status, reward, extra fields, reason) for one judge result."""
    extra: dict[str, Any] = {}
    if isinstance(result, dict):
        extra = {k: v for k, v in result.items() if k != "reward"}
        if result.get("reward") is None:
            return "missing_reward", None, extra, "judge returned a dict without a reward"
        value = result["reward"]
    elif result is None:
        return "missing_reward", None, extra, "judge returned None (no reward)"
    else:
        value = result
    coerced = None
    if isinstance(value, bool):
        coerced, value = "bool", float(value)
    if not isinstance(value, Real):
        why = f"reward is a {type(value).__name__} ({value!r:.40}), not a number"
        return "invalid_result", None, extra, why
    number = float(value)
    if not math.isfinite(number):
        return "invalid_result", None, extra, f"reward is {number}, not a finite number"
    if scale is not None:
        lo, hi = scale
        if not lo <= number <= hi:
            return "invalid_result", None, extra, f"rating {number:g} is outside scale {scale}"
        extra["rating"] = number
        number = (number - lo) / (hi - lo)
    elif not 0.0 <= number <= 1.0:
        why = f"reward {number:g} is outside [0, 1]; pass scale=(lo, hi) for a rating judge"
        return "invalid_result", None, extra, why
    if coerced:
        extra["coerced"] = coerced
    return "ok", number, extra, ""


def _check_scale(scale: Any) -> tuple[float, float] | None:
    if scale is None:
        return None
    try:
        lo, hi = (float(x) for x in scale)
    except (TypeError, ValueError):
        raise ConfigError(f"scale must be a (low, high) pair like (1, 5), got {scale!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ConfigError(f"scale must have low < high, got {scale!r}")
    return lo, hi


@valid_kwargs
def judge_row(
    row: dict[str, Any],
    judge: Callable[[Any], Any],
    *,
    name: str | None = None,
    version: str | None = None,
    scale: tuple[float, float] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    source: str = "grade",
) -> dict[str, Any]:
    """Judge one row and return a graded copy (the input row is not changed).

    For in-place grading (``grader=``), ``row.update(judge_row(row, judge))``.

    >>> judge_row({"prompt": "p"}, lambda r: {"reward": 0.7, "markers": {"grounded": 1.0}})[
    ...     "markers"]
    {'grounded': 1.0}
    """
    bounds = _check_scale(scale)
    out = dict(row)
    for key in _GRADE_KEYS:
        out.pop(key, None)
    meta: dict[str, Any] = {"version": version or getattr(judge, "version", None)}
    try:
        result = _call_with_deadline(judge, row, timeout)
    except TimeoutError as exc:
        status, reward, reason = "timeout", None, str(exc)
        extra: dict[str, Any] = {}
    except Exception as exc:  # any judge failure is recorded on the row
        status, reward, extra = "error", None, {}
        reason = f"judge raised {type(exc).__name__}: {exc}"
    else:
        status, reward, extra, reason = _interpret(result, bounds)
    if bounds is not None:
        meta["scale"] = list(bounds)
    markers = extra.pop("markers", None)
    if isinstance(markers, dict):
        merged = dict(out.get("markers") or {})
        dropped = []
        for key, value in markers.items():
            if isinstance(value, Real) and math.isfinite(float(value)):
                merged[str(key)] = float(value)
            else:
                dropped.append(str(key))
        out["markers"] = merged
        if dropped:
            meta["dropped_markers"] = dropped
    if "rating" in extra:
        out["rating"] = extra.pop("rating")
    if extra.get("failure_class") is not None:
        out["failure_class"] = extra.pop("failure_class")
    judge_reason = extra.pop("reason", None)
    if judge_reason is not None:
        reason = str(judge_reason) if status == "ok" else f"{reason}: {judge_reason}"
    meta.update({key: value for key, value in extra.items() if key not in _CORE_KEYS})
    out["reward"] = reward
    out["reason"] = mask_secrets(reason) if isinstance(reason, str) else reason
    out["judge_status"] = status
    out["judge_name"] = name or judge_name_of(judge)
    out["judge_meta"] = meta
    lineage = dict(row.get("lineage") or {})
    lineage["source"] = source
    lineage.setdefault("stages", [])
    out["lineage"] = lineage
    return out


@valid_kwargs
def run_judge(
    rows: Any,
    judge: Callable[[Any], Any],
    *,
    name: str | None = None,
    version: str | None = None,
    scale: tuple[float, float] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    workers: int = 1,
    source: str = "grade",
    progress: bool = True,
    give_up_after: int | None = 5,
) -> ScoredData:
    """Grade rows with any judge callable; return a ``ScoredData`` of graded copies.

    Args:
        rows: row dicts, a run, or a JSONL path.
        judge: the callable (see the module docstring for what it may return).
        name: recorded as ``judge_name``.
        version: recorded as ``judge_meta["version"]``.
        scale: ``(lo, hi)`` for a rating judge; the rating is kept, reward mapped to [0, 1].
        timeout: seconds per row (``None`` waits forever); a late judge is ``timeout``.
        workers: rows judged at once (threads), for slow judges such as HTTP calls.
        progress: one progress line on stderr when it is a terminal (``False`` silences it).
        give_up_after: after this many timeouts in a row the judge is taken to be down: the
            remaining rows are not sent and are marked ``timeout`` with that reason (``None``
            keeps trying every row).

    Raises:
        JudgeError: ``judge`` is not callable.

    >>> run_judge([{"prompt": "p"}], lambda r: 4, scale=(1, 5)).rows[0]["reward"]
    0.75
    """
    if not callable(judge):
        raise JudgeError(
            f"judge must be a callable row -> reward, got {type(judge).__name__}; "
            "pass a function, a verifier such as verify.ExactMatch(), or module:attr on the CLI"
        )
    _check_scale(scale)
    if not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers must be an int >= 1, got {workers!r}")
    row_list = as_rows(rows)
    label = name or judge_name_of(judge)

    meta_version = version or getattr(judge, "version", None)
    streak = [0]
    lock = threading.Lock()

    def abandoned(row: Any) -> Any:
        raise TimeoutError(
            f"not sent: the judge timed out on {give_up_after} rows in a row, so the run "
            "stopped calling it (give_up_after=); fix the judge or raise timeout="
        )

    def one(row: dict[str, Any]) -> dict[str, Any]:
        if give_up_after is not None and streak[0] >= give_up_after:
            return judge_row(
                row,
                abandoned,
                name=label,
                version=meta_version,
                scale=scale,
                timeout=None,
                source=source,
            )
        out = judge_row(
            row, judge, name=label, version=version, scale=scale, timeout=timeout, source=source
        )
        with lock:
            streak[0] = streak[0] + 1 if out["judge_status"] == "timeout" else 0
        return out

    line = Progress("grade", len(row_list), enabled=progress, min_target=20)
    graded = []
    if workers == 1 or len(row_list) < 2:
        for row in row_list:
            graded.append(one(row))
            line.update(len(graded))
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for done in pool.map(one, row_list):
                graded.append(done)
                line.update(len(graded))
    line.finish(len(graded))
    return ScoredData(rows=graded, judge_name=label, version=version, source=source)


@valid_kwargs
def evaluate(
    rollouts: Any,
    judge: Callable[[Any], Any],
    *,
    model: str | None = None,
    name: str | None = None,
    version: str | None = None,
    scale: tuple[float, float] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    workers: int = 1,
    progress: bool = True,
    give_up_after: int | None = 5,
) -> ScoredData:
    """Grade held-out rollouts; rows carry ``lineage.source == "eval"`` (never train on them).

    ``model`` names the model that produced the rollouts (kept in ``lineage["model"]`` and as
    ``model_version`` where the row has none). The other keywords are those of
    :func:`run_judge`.

    >>> evaluate([{"prompt": "p"}], lambda r: 0, model="m1").rows[0]["lineage"]["source"]
    'eval'
    """
    row_list = as_rows(rollouts, what="rollouts")
    if model is not None:
        stamped = []
        for row in row_list:
            copy = dict(row)
            lineage = dict(copy.get("lineage") or {})
            lineage["model"] = model
            copy["lineage"] = lineage
            copy.setdefault("model_version", model)
            stamped.append(copy)
        row_list = stamped
    return run_judge(row_list, judge, source="eval", name=name, version=version, scale=scale,
                     timeout=timeout, workers=workers, progress=progress,
                     give_up_after=give_up_after)
