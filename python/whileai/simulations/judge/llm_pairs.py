"""A judge model that compares two replies: the default judge of ``judge_pairs``.

``pair_judge()`` reads the judge role's model (``judge=`` keyword, ``whileai.configure`` /
``context``, ``WHILEAI_JUDGE``) and returns a callable ``{"prompt", "a", "b"} -> "a"|"b"|"tie"``,
so ``zps.judge_pairs(pairs)`` runs without ``judge=`` once a judge model is configured.

>>> winner_of('{"winner": "B", "reason": "cites the order"}')
'b'
>>> winner_of("no idea") is None
True
"""

from __future__ import annotations

import json
import re
from typing import Any

from whileai.errors import JudgeError
from whileai.simulations.models.client import ChatClient
from whileai.simulations.models.resolve import resolve_spec

__all__ = ["PAIR_SYSTEM", "PairJudge", "pair_judge", "winner_of"]

PAIR_SYSTEM = (
    "You compare two replies, A and B, to the same user request and say which one serves the "
    "user better (correct, complete, honest about what it did). If neither is better, say tie. "
    'Answer with JSON only: {"winner": "A" | "B" | "tie", "reason": "<short>"}.'
)

_WORD = re.compile(r'"winner"\s*:\s*"(a|b|tie)"', re.IGNORECASE)


def winner_of(text: str) -> str | None:
    """``"a"``, ``"b"`` or ``"tie"`` from a judge model's answer, or None when it names none."""
    found = _WORD.search(text or "")
    if found:
        return found.group(1).lower()
    bare = (text or "").strip().strip('".').lower()
    return bare if bare in ("a", "b", "tie") else None


class PairJudge:
    """One judge model asked ``A or B?`` per call; its client is closed with ``close()``."""

    def __init__(self, client: ChatClient, *, temperature: float = 0.0) -> None:
        self.client = client
        self.temperature = temperature

    def __call__(self, pair: dict[str, Any]) -> str | None:
        shown = {"request": pair.get("prompt"), "A": pair.get("a"), "B": pair.get("b")}
        messages = [{"role": "system", "content": PAIR_SYSTEM},
                    {"role": "user", "content": json.dumps(shown, ensure_ascii=False,
                                                           default=str)}]
        return winner_of(self.client.chat(messages, temperature=self.temperature).content)

    def close(self) -> None:
        """Close the judge model's HTTP sessions."""
        self.client.close()


def pair_judge(model: Any = None, *, temperature: float = 0.0, policy: Any = None) -> PairJudge:
    """The pairwise judge over ``model`` (else the configured judge model).

    Raises:
        JudgeError: no judge model is given or configured (the message says how to set one).
    """

    spec = resolve_spec("judge", model)
    if spec is None:
        raise JudgeError("judge_pairs needs a judge: pass judge= (a callable {'prompt','a','b'}"
                          " -> 'a'|'b'|'tie', or a model spec), whileai.configure(judge=...),"
                          " or set WHILEAI_JUDGE (for example 'openai:gpt-4.1-mini')")
    return PairJudge(ChatClient(spec, role="judge", policy=policy), temperature=temperature)
