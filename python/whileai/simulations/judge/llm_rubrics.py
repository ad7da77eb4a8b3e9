"""Per-prompt rubrics: a model writes checkable criteria for each task, and a judge returns a
verdict per criterion (``markers["rubric:<item>"]``, reward = share of criteria met).

>>> slug("Confirms the order id before cancelling!")
'confirms_the_order_id_before_cancelling'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from whileai.errors import ConfigError, JudgeError
from whileai.rows.outbound import task_key
from whileai.rows.source import as_rows
from whileai.simulations.judge.llm_judge import prompt_hash, render_transcript
from whileai.simulations.models.client import ChatClient
from whileai.simulations.models.reply import json_in
from whileai.simulations.models.resolve import resolve_spec

__all__ = ["RubricJudge", "rubric_items", "rubric_judge", "slug", "write_rubrics"]

WRITER_SYSTEM = (
    "You write grading rubrics for an AI assistant's conversations. For the user's request you "
    "are given, write 3 to 6 short criteria a grader can check from the transcript alone "
    "(each one observable: a tool called with the right value, a fact stated, a step not "
    'skipped). Answer with JSON only: {"criteria": ["...", "..."]}.'
)

RUBRIC_SYSTEM = (
    "You grade one conversation between a user and an AI assistant, criterion by criterion. "
    "For each numbered criterion decide met (true) or not met (false). Answer with JSON only: "
    '{"verdicts": [{"item": <number>, "met": true|false, "reason": "<short>"}]}.'
)


def slug(text: str, limit: int = 48) -> str:
    """A marker-safe name for a criterion."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = "_".join(words)[:limit].rstrip("_")
    return out or "item"


def rubric_items(rubric: object) -> list[str]:
    """Criteria from a list, or from text with one criterion per (bulleted/numbered) line."""
    if isinstance(rubric, str):
        lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
                 for line in rubric.splitlines()]
        return [line for line in lines if line]
    if isinstance(rubric, Sequence):
        return [str(x).strip() for x in rubric if str(x).strip()]
    return []


def _block(row: Mapping[str, Any]) -> Mapping[str, Any]:
    priv = row.get("privileged")
    return priv if isinstance(priv, Mapping) else {}


def _criteria(text: str) -> list[str]:
    obj = json_in(text, who="rubric writer", arrays=True)
    items = obj.get("criteria") if isinstance(obj, dict) else obj
    criteria = rubric_items(items) if isinstance(items, list) else []
    if not 1 <= len(criteria) <= 12:
        raise ValueError(f"expected 1 to 12 criteria, got {len(criteria)}")
    return criteria


def write_rubrics(
    rows: Any,
    *,
    domain: str | None = None,
    model: Any = None,
    overwrite: bool = False,
    attempts: int = 2,
    policy: Any = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Write per-prompt criteria onto ``privileged.rubric`` (one model call per distinct task).

    Args:
        rows: row dicts, a run, or a JSONL path; copies are returned.
        domain: a word on the domain ("refunds"), given to the writer.
        model: backend spec; else the judge role's default (``whileai.configure(judge=...)``,
            ``WHILEAI_JUDGE``).
        overwrite: rewrite rows that already carry a rubric (else they are kept and counted).

    Returns:
        ``(rows, report)``; the report counts ``tasks``, ``written``, ``kept`` and ``failed``
        (tasks the model answered off-format; their rows are returned without a rubric).
    """
    spec = resolve_spec("judge", model)
    if spec is None:
        raise ConfigError("write_rubrics needs a model: pass model=, whileai.configure(judge=...)"
                          " or set WHILEAI_JUDGE")
    out = [dict(r) for r in as_rows(rows)]
    groups: dict[str, list[dict[str, Any]]] = {}
    for i, row in enumerate(out):
        groups.setdefault(task_key(row, where=f"rows[{i}]"), []).append(row)
    counts = {"written": 0, "kept": 0, "failed": 0}
    errors: list[str] = []
    with ChatClient(spec, role="judge", policy=policy) as client:
        for rows_of_task in groups.values():
            first = rows_of_task[0]
            priv = _block(first)
            if priv.get("rubric") and not overwrite:
                counts["kept"] += 1
                continue
            ask = [f"Domain: {domain}" if domain else "", f"User request: {first.get('prompt')}"]
            if priv.get("reference"):
                ask.append(f"What a correct handling involves: {priv['reference']}")
            messages = [{"role": "system", "content": WRITER_SYSTEM},
                        {"role": "user", "content": "\n".join(a for a in ask if a)}]
            criteria: list[str] | None = None
            why = ""
            for _ in range(max(1, attempts)):
                try:
                    criteria = _criteria(client.chat(messages, temperature=0.0).content)
                    break
                except ValueError as exc:
                    why = str(exc)
            if criteria is None:
                counts["failed"] += 1
                errors.append(f"{first.get('prompt')!r:.60}: {why}")
                continue
            counts["written"] += 1
            for row in rows_of_task:
                block = dict(row.get("privileged") or {})
                block["rubric"] = criteria
                row["privileged"] = block
    return out, {"tasks": len(groups), **counts, "model": spec.label, "errors": errors}


class RubricJudge:
    """Judge callable: one verdict per criterion of the row's rubric (or a fixed ``rubric``)."""

    def __init__(self, client: ChatClient, *, rubric: object = None, temperature: float = 0.0,
                 attempts: int = 2) -> None:
        self.client = client
        self.rubric = rubric_items(rubric) if rubric is not None else None
        self.temperature = temperature
        self.attempts = max(1, attempts)
        self.model = client.spec.label
        self.prompt_hash = prompt_hash(RUBRIC_SYSTEM, self.rubric)
        self.name = f"rubric:{self.model}"
        self.version = f"{self.model}@{self.prompt_hash}"

    def close(self) -> None:
        """Close the HTTP sessions."""
        self.client.close()

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """Grade ``row``; no criteria means no reward (``missing_reward`` via run_judge)."""
        priv = _block(row)
        items = self.rubric or rubric_items(priv.get("rubric"))
        if not items:
            return {"reward": None, "reason": "row has no rubric: run zps.write_rubrics first"}
        listing = "\n".join(f"{i + 1}. {item}" for i, item in enumerate(items))
        messages = [{"role": "system", "content": RUBRIC_SYSTEM},
                    {"role": "user", "content": f"Criteria:\n{listing}\n\nConversation:\n"
                                                f"{render_transcript(row)}"}]
        why = ""
        for _ in range(self.attempts):
            reply = self.client.chat(messages, temperature=self.temperature)
            try:
                met = self._verdicts(reply.content, len(items))
            except (ValueError, TypeError) as exc:
                why = str(exc)
                continue
            markers = {f"rubric:{slug(item)}": 1.0 if ok else 0.0
                       for item, ok in zip(items, met, strict=True)}
            failed = [item for item, ok in zip(items, met, strict=True) if not ok]
            reason = "all criteria met" if not failed else "not met: " + "; ".join(failed)
            return {"reward": sum(met) / len(met), "reason": reason, "markers": markers,
                    "model": reply.model or self.model, "prompt_hash": self.prompt_hash,
                    "criteria": len(items)}
        raise JudgeError(f"rubric judge {self.model} gave no usable verdicts ({why})")

    @staticmethod
    def _verdicts(text: str, n: int) -> list[bool]:
        obj = json_in(text, who="rubric judge", arrays=True)
        verdicts = obj.get("verdicts") if isinstance(obj, dict) else obj
        if not isinstance(verdicts, list):
            raise ValueError("no verdicts list")
        met: dict[int, bool] = {}
        for pos, v in enumerate(verdicts):
            if isinstance(v, dict) and isinstance(v.get("met"), bool):
                idx = v.get("item", pos + 1)
                met[int(idx) - 1 if isinstance(idx, (int, float)) else pos] = v["met"]
        if sorted(met) != list(range(n)):
            raise ValueError(f"expected a verdict for each of {n} criteria, got {len(met)}")
        return [met[i] for i in range(n)]


def rubric_judge(model: Any = None, *, rubric: object = None, temperature: float = 0.0,
                 policy: Any = None) -> RubricJudge:
    """A judge that checks each criterion of ``privileged.rubric`` (from :func:`write_rubrics`).

    Use with ``zps.run_judge(rows, zps.rubric_judge())``; markers are ``rubric:<item>``.

    Raises:
        ConfigError: no judge model is configured.
    """

    spec = resolve_spec("judge", model)
    if spec is None:
        raise ConfigError("rubric_judge needs a model: pass model=, whileai.configure(judge=...)"
                          " or set WHILEAI_JUDGE")
    return RubricJudge(ChatClient(spec, role="judge", policy=policy), rubric=rubric,
                       temperature=temperature)
