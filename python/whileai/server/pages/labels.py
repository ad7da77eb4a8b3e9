"""Hand labels: one JSON line per verdict, in the shape ``attach_labels`` reads, and the
judge's agreement with them.

A line names its row as ``attach_labels`` matches it (``scenario_id`` / ``task_id`` /
``prompt``, plus ``rollout_index``) and carries ``gold_reward`` (1 pass, 0 fail), the
``annotator``, an optional ``note`` and when it was given. Lines are appended, never rewritten;
for a row and annotator the last line wins, as in ``attach_labels``. So
``zps.attach_labels(rows, "rows.labels.jsonl")`` then ``zps.judge_trust(rows)`` reads exactly
what was typed in the viewer.

>>> line = label_line({"scenario_id": "sc-1", "rollout_index": 2}, 1, note="ok", annotator="ana")
>>> line["scenario_id"], line["rollout_index"], line["gold_reward"], line["annotator"]
('sc-1', 2, 1.0, 'ana')
>>> kappa_interval(40, 5, 5, 50)
(0.679, 0.917)
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import RowError
from whileai.server.pages.rowindex import RowIndex, bitset

__all__ = ["agreement", "append_label", "kappa_interval", "label_facet", "label_line", "latest",
           "positions", "read_labels"]

_NOTE_LIMIT = 2000


def label_line(row: Mapping[str, Any], value: Any, *, note: str = "", annotator: str) -> dict[
        str, Any]:
    """The label line for ``row`` (``value`` 1 pass / 0 fail).

    Raises:
        RowError: the value is not 0 or 1.
    """
    if isinstance(value, bool) or value not in (0, 1):
        raise RowError(f"a hand label is 1 (pass) or 0 (fail), got {value!r}")
    line: dict[str, Any] = {}
    for key in ("scenario_id", "task_id", "prompt"):
        if row.get(key) is not None:
            line[key] = row[key]
            break
    rollout = row.get("rollout_index")
    line["rollout_index"] = rollout if isinstance(rollout, int) else 0
    line.update({"gold_reward": float(value), "annotator": annotator,
                 "note": str(note)[:_NOTE_LIMIT], "at": round(time.time(), 3)})
    return line


def append_label(path: Path, line: Mapping[str, Any]) -> None:
    """Append one label line to ``path`` (made 0600 when new, its folder 0700)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def read_labels(path: Path) -> list[dict[str, Any]]:
    """The label lines at ``path`` (none when the file does not exist yet)."""
    if not path.exists():
        return []
    from whileai.rows.jsonl import read_jsonl
    return list(read_jsonl(path))


def _key(line: Mapping[str, Any]) -> tuple[str, int]:
    task = line.get("scenario_id") or line.get("task_id") or line.get("prompt") or ""
    rollout = line.get("rollout_index")
    return str(task), rollout if isinstance(rollout, int) else 0


def latest(lines: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    """The last label line per row (task, rollout).

    >>> latest([{"prompt": "p", "gold_reward": 1}, {"prompt": "p", "gold_reward": 0}])
    {('p', 0): {'prompt': 'p', 'gold_reward': 0}}
    """
    return {_key(line): line for line in lines}


def positions(index: RowIndex, lines: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The latest label line of each labelled row, by the row's position in ``index``."""
    out = {}
    for (task, rollout), line in latest(lines).items():
        for p in index.by_task.get(task, ()):
            if (index.summaries[p].rollout or 0) == rollout:
                out[p] = line
                break
    return out


def label_facet(index: RowIndex, labelled: dict[int, dict[str, Any]]) -> dict[str, int]:
    """The ``label`` facet's bitsets: ``pass`` / ``fail`` by the latest label, else ``none``."""
    groups: dict[str, list[int]] = {"pass": [], "fail": []}
    for p, line in labelled.items():
        groups["pass" if float(line["gold_reward"]) >= 0.5 else "fail"].append(p)
    size = len(index)
    everything = (1 << size) - 1
    out = {k: bitset(v, size) for k, v in groups.items()}
    out["none"] = everything & ~(out["pass"] | out["fail"])
    return out


def kappa_interval(tp: int, fp: int, fn: int, tn: int) -> tuple[float, float] | None:
    """Cohen's kappa's 95% interval by its large-sample standard error, clipped to [-1, 1]
    (three decimals); None when kappa is undefined (one class only, or no rows).

    The standard error is sqrt(po (1 - po) / (n (1 - pe)^2)) (Cohen 1960), with po the
    observed and pe the chance agreement.
    """
    n = tp + fp + fn + tn
    if n == 0:
        return None
    po = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    if pe >= 1:
        return None
    kappa = (po - pe) / (1 - pe)
    se = math.sqrt(po * (1 - po) / (n * (1 - pe) ** 2))
    return (round(max(-1.0, kappa - 1.96 * se), 3), round(min(1.0, kappa + 1.96 * se), 3))


def agreement(index: RowIndex, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The judge's agreement with the hand labels so far, with kappa's interval and each
    labelled row's position (``judge_agreement`` over the labelled rows after
    ``attach_labels``)."""
    from whileai.simulations.judge.trust import attach_labels, judge_agreement

    found = sorted(positions(index, lines))
    rows = [index.row(p) for p in found]
    report: dict[str, Any] = {"matched": 0, "unmatched": 0}
    if rows and lines:
        rows, attached = attach_labels(rows, lines)
        report = {"matched": attached["matched"], "unmatched": attached["unmatched"]}
    result = judge_agreement(rows)
    confusion = result["confusion"]
    threshold = 0.5
    disagree = [p for p, row in zip(found, rows, strict=True)
                if isinstance(row.get("reward"), (int, float)) and
                isinstance(row.get("gold_reward"), (int, float)) and
                (row["reward"] >= threshold) != (row["gold_reward"] >= threshold)]
    return {**result, **report, "labels": len(lines), "positions": found,
            "disagree": disagree,
            "kappa_ci95": kappa_interval(confusion["tp"], confusion["fp"], confusion["fn"],
                                         confusion["tn"]) if result["kappa"] is not None
            else None}
