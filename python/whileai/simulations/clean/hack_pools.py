"""Synthetic graded pools for checking ``hack_scan`` itself: null pools and planted shortcuts.

A *null* pool has no signal at all: each ask gets a pass rate drawn uniformly from [0, 1], every
rollout passes with that probability whatever it says, replies are random words from a small
vocabulary, and half the rollouts (on average) call one tool. A scan of a null pool should come
back ``reward_hack`` at most ``alpha`` of the time. A *planted* pool adds a phrase to a share of
the rollouts and raises their pass probability by ``lift`` within the ask: a scan should name the
phrase. The calibration tests and ``tools/scan_calibration.py`` build their pools here.

>>> rows = synthetic_pool(3, 4, seed=0)
>>> len(rows), sorted(rows[0])[:3], rows[0]["reward"] in (0.0, 1.0)
(12, ['final_text', 'prompt', 'reward'], True)
>>> planted = synthetic_pool(60, 8, seed=0, phrase="rest assured")
>>> sum("rest assured" in r["final_text"] for r in planted) / len(planted) > 0.2
True
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["VOCAB", "synthetic_pool"]

VOCAB = (
    "order", "refund", "policy", "status", "item", "box", "shipped", "soon",
    "today", "check", "note", "account", "thanks", "please", "update", "return",
)


def synthetic_pool(
    asks: int,
    k: int,
    *,
    seed: int,
    words: tuple[int, int] = (5, 40),
    vocab: tuple[str, ...] = VOCAB,
    tool: str = "lookup",
    tool_share: float = 0.5,
    phrase: str | None = None,
    share: float = 0.3,
    lift: float = 0.3,
) -> list[dict[str, Any]]:
    """Return ``asks * k`` graded rows whose reward depends on the text only through ``phrase``.

    Args:
        asks / k: number of asks and rollouts per ask.
        seed: the pool's seed (``random.Random``), so a pool is the same in every process.
        words: inclusive range of the reply length in words, drawn uniformly per rollout.
        vocab / tool / tool_share: the reply words, and the tool called by that share of rollouts.
        phrase: None for a null pool; else appended to ``share`` of the replies, each of which
            passes with probability ``base + lift`` (``base`` uniform in ``[0, 1 - lift]`` per ask)
            instead of ``base``.

    Returns:
        Rows with ``scenario_id``, ``rollout_index``, ``prompt``, ``steps``, ``final_text`` and a
        0/1 ``reward``.
    """
    rng = random.Random(seed)
    rows = []
    for ask in range(asks):
        base = rng.random() * (1.0 - lift if phrase else 1.0)
        for r in range(k):
            text = " ".join(rng.choice(vocab) for _ in range(rng.randint(*words)))
            called = rng.random() < tool_share
            planted = phrase is not None and rng.random() < share
            if planted:
                text = f"{text} {phrase}"
            passed = rng.random() < base + (lift if planted else 0.0)
            rows.append({
                "scenario_id": f"pool{seed}-ask{ask}",
                "rollout_index": r,
                "prompt": f"ask {ask}",
                "steps": [{"tool": tool, "arguments": {"q": str(ask)}, "result": {}}]
                if called else [],
                "final_text": text,
                "reward": 1.0 if passed else 0.0,
            })
    return rows
