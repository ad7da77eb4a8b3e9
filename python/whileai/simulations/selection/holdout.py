"""Hold out a slice of a run as stand-in production traces, split by task.

A task is wholly on one side, so the held-out slice is prompt-disjoint from the rest. Every
distinct flaw signature (the fault kinds and seeded mistakes of a failing or faulted rollout,
else its ``behavior_signature``) lands on the held-out side at least once; the rest of the slice
is filled with tasks drawn by seed until ``fraction`` of the tasks are held out.

>>> rows = [{"task_id": f"t{i}", "reward": 1.0} for i in range(10)]
>>> prod, train = split_pseudo_production(rows, fraction=0.2)
>>> len(prod), len(train)
(2, 8)
"""

from __future__ import annotations

import math
import random
from typing import Any

from whileai.errors import ConfigError
from whileai.rows.source import as_rows, read_reward
from whileai.simulations.selection.hygiene import PASS_AT, group_rows

__all__ = ["flaw_signature", "split_pseudo_production"]


def flaw_signature(row: dict[str, Any]) -> str | None:
    """The row's flaw signature, or None for a clean passing rollout.

    >>> flaw_signature({"faults": [{"kind": "timeout"}], "reward": 1.0})
    'fault:timeout'
    """
    parts = sorted({f"fault:{f['kind']}" for f in row.get("faults") or []
                    if isinstance(f, dict) and f.get("kind")})
    parts += sorted({f"seeded:{s}" for s in row.get("seeded") or [] if isinstance(s, str)})
    reward, _ = read_reward(row)
    if parts:
        return "+".join(parts)
    if reward is not None and reward < PASS_AT:
        dims = row.get("scenario_dimensions")
        sig = dims.get("behavior_signature") if isinstance(dims, dict) else None
        return f"fail:{sig}" if sig else "fail"
    return None


def split_pseudo_production(
    rows: Any, fraction: float = 0.2, seed: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return ``(held_out, rest)``: whole tasks, every flaw signature held out at least once."""
    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"fraction must be in (0, 1), got {fraction}")
    groups = group_rows(as_rows(rows))
    keys = list(groups)
    rng = random.Random(seed)
    order = keys[:]
    rng.shuffle(order)
    rank = {k: i for i, k in enumerate(order)}
    sigs = {k: {s for r in groups[k] if (s := flaw_signature(r))} for k in keys}
    held: list[str] = []
    covered: set[str] = set()
    for sig in sorted({s for ss in sigs.values() for s in ss}):
        if sig in covered:
            continue
        task = min((k for k in keys if sig in sigs[k]), key=lambda k: rank[k])
        held.append(task)
        covered |= sigs[task]
    target = max(1, math.ceil(fraction * len(keys))) if keys else 0
    for k in order:
        if len(held) >= target:
            break
        if k not in held:
            held.append(k)
    chosen = set(held)
    prod = [r for k in keys if k in chosen for r in groups[k]]
    rest = [r for k in keys if k not in chosen for r in groups[k]]
    return prod, rest
