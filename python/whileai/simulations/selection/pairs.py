"""Preference pairs from graded rollouts of the same task (DPO), optionally length-matched.

Per task, the chosen reply is the highest-reward rollout and the rejected one a lower-reward
rollout (by at least ``margin``); with ``match_length`` the rejected rollout is the one whose
reply length is closest to the chosen one's, and the pair is skipped (and counted) when the
lengths differ by more than ``length_tolerance`` of the longer reply, so a preference for
length is not what the pair teaches.

>>> rows = [{"task_id": "t", "prompt": "p", "final_text": "good", "reward": 1.0},
...         {"task_id": "t", "prompt": "p", "final_text": "bad", "reward": 0.0}]
>>> pairs, report = build_preference_pairs(rows)
>>> pairs[0]["chosen"]["final_text"], pairs[0]["rejected_reward"], report["pairs"]
('good', 0.0, 1)
"""

from __future__ import annotations

from typing import Any

from whileai.errors import ConfigError
from whileai.rows.source import as_rows, read_reward, task_key
from whileai.simulations.selection.hygiene import group_rows

__all__ = ["build_preference_pairs"]


def _length(row: dict[str, Any]) -> int:
    text = row.get("final_text")
    return len(text) if isinstance(text, str) else 0


def build_preference_pairs(
    rows: Any,
    *,
    margin: float = 0.0,
    match_length: bool = False,
    length_tolerance: float = 0.25,
    pairs_per_task: int = 1,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return ``(pairs, report)``; each pair is ``{prompt, chosen, rejected, scenario_id,
    chosen_reward, rejected_reward}`` with whole rows on both sides.

    Raises:
        ConfigError: ``margin`` < 0, ``length_tolerance`` outside [0, 1] or ``pairs_per_task`` < 1.
    """
    if margin < 0:
        raise ConfigError(f"margin must be >= 0, got {margin}")
    if not 0.0 <= length_tolerance <= 1.0:
        raise ConfigError(f"length_tolerance must be in [0, 1], got {length_tolerance}")
    if pairs_per_task < 1:
        raise ConfigError(f"pairs_per_task must be >= 1, got {pairs_per_task}")
    given = as_rows(rows)
    skipped = {"unjudged": 0, "single": 0, "no_contrast": 0, "length_mismatch": 0,
               "no_task": 0}
    pairs: list[dict[str, Any]] = []
    for key, group in group_rows(given).items():
        if not key:  # rows with no task key: pairing them would mix different tasks
            skipped["no_task"] += len(group)
            continue
        graded = [(r, read_reward(r)[0]) for r in group]
        usable = [(r, v) for r, v in graded if v is not None]
        skipped["unjudged"] += len(graded) - len(usable)
        if len(usable) < 2:
            skipped["single"] += 1
            continue
        order = sorted(range(len(usable)), key=lambda i: -usable[i][1])  # type: ignore[operator]
        used: set[int] = set()
        made = 0
        for ci in order:
            if made >= pairs_per_task or ci in used:
                continue
            chosen, c_reward = usable[ci]
            losers = [i for i in order if i not in used and i != ci
                      and usable[i][1] <= c_reward - margin and usable[i][1] < c_reward]  # type: ignore[operator]
            if not losers:
                continue
            if match_length:
                target = _length(chosen)
                losers.sort(key=lambda i: (abs(_length(usable[i][0]) - target), i))
                li = losers[0]
                longer = max(target, _length(usable[li][0])) or 1
                if abs(_length(usable[li][0]) - target) / longer > length_tolerance:
                    skipped["length_mismatch"] += 1
                    break
            else:
                li = losers[-1]  # the lowest reward
            rejected, r_reward = usable[li]
            used.update((ci, li))
            made += 1
            pairs.append({
                "prompt": chosen.get("prompt", ""),
                "chosen": chosen,
                "rejected": rejected,
                "scenario_id": chosen.get("scenario_id") or task_key(chosen),
                "chosen_reward": float(c_reward),  # type: ignore[arg-type]
                "rejected_reward": float(r_reward),  # type: ignore[arg-type]
            })
        if not made and not skipped["length_mismatch"]:
            skipped["no_contrast"] += 1
    n_eval = sum(
        any(isinstance(p[s].get("lineage"), dict) and p[s]["lineage"].get("source") == "eval"
            for s in ("chosen", "rejected"))
        for p in pairs
    )
    warnings = []
    if n_eval:
        warnings.append(f"{n_eval} pairs include rows whose reward came from evaluate(): the "
                        "held-out scorer becomes the training signal")
    lengths = ([_length(p["chosen"]) for p in pairs], [_length(p["rejected"]) for p in pairs])
    report = {
        "rows": len(given),
        "tasks": len(group_rows(given)),
        "pairs": len(pairs),
        "skipped": skipped,
        "match_length": match_length,
        "chosen_mean_chars": round(sum(lengths[0]) / len(pairs), 1) if pairs else None,
        "rejected_mean_chars": round(sum(lengths[1]) / len(pairs), 1) if pairs else None,
        "eval_sourced": n_eval,
        "warnings": warnings,
    }
    return pairs, report
