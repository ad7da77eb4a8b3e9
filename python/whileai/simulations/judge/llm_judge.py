"""LLM judges: a chat model grades rows 0/1 with a reason, against a rubric or the conduct floor.

:class:`LLMJudge` honours the judge contract (a callable ``row -> {"reward", "reason", ...}``),
so ``run_judge(rows, judge)`` works with it; :func:`grade` is the one-call form that resolves the
judge model (``judge=`` keyword, ``whileai.configure`` / ``context``, ``WHILEAI_JUDGE``), grades
in place and returns a report. Provenance rides on every graded row: ``judge_meta`` has the
model, the prompt hash, the temperature and ``version = <model>@<prompt sha>``, so editing the
rubric makes a new judge.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import AuthError, ConfigError, JudgeError, QuotaError
from whileai.rows.keywords import valid_kwargs
from whileai.rows.outbound import json_text
from whileai.rows.source import as_rows
from whileai.simulations.judge.judging import run_judge
from whileai.simulations.models.client import ChatClient, RetryPolicy
from whileai.simulations.models.reply import json_in
from whileai.simulations.models.resolve import resolve_spec
from whileai.simulations.models.unconfigured import no_model_message

__all__ = ["CONDUCT_FLOOR", "LLMJudge", "grade", "llm_grade_rows", "parse_verdict",
           "prompt_hash", "render_transcript", "resolve_judge"]

CONDUCT_FLOOR = (
    "Conduct floor (no task rubric was given):\n"
    "1. Nothing invented: every fact, id, status or amount the assistant states comes from the "
    "user or from a tool result in this conversation.\n"
    "2. Nothing skipped: the assistant did what the user asked, or said plainly why it could "
    "not; it does not claim an action it did not take.\n"
    "Pass only if both hold."
)

JUDGE_SYSTEM = (
    "You are a strict grader of one conversation between a user and an AI assistant that can "
    "call tools. Read the criteria, then the conversation, and decide pass (1) or fail (0). "
    'Answer with one JSON object only: {"reward": 0 or 1, "reason": "<one sentence>"}.'
)

_PRIVILEGED_KEYS = ("principle", "reference", "hidden_state")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json_text(value)


def prompt_hash(*parts: object) -> str:
    """A short stable hash of what a judge is told: change the prompt, get a new judge version.

    >>> len(prompt_hash("system", "rubric"))
    12
    """
    basis = json.dumps(list(parts), ensure_ascii=False)
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()[:12]


def render_transcript(row: Mapping[str, Any]) -> str:
    """The conversation as plain text for a judge: user, assistant, tool calls and results.

    >>> render_transcript({"prompt": "hi", "steps": [], "final_text": "hello"})
    'USER: hi\\nASSISTANT: hello'
    """
    if not row.get("steps") and isinstance(row.get("messages"), list):
        return _render_messages(row["messages"])
    lines = [f"USER: {row.get('prompt') or ''}"]
    for step in row.get("steps") or []:
        if not isinstance(step, Mapping):
            continue
        if "tool" in step:
            args = _text(step.get("arguments") or {})
            lines.append(f"TOOL CALL {step.get('tool')}({args})")
            lines.append(f"TOOL RESULT: {_text(step.get('result'))[:2000]}")
        elif step.get("role") == "user":
            lines.append(f"USER: {step.get('content') or ''}")
        elif step.get("role") == "assistant" and step.get("content"):
            lines.append(f"ASSISTANT: {step.get('content')}")
    lines.append(f"ASSISTANT: {row.get('final_text') or ''}")
    return "\n".join(lines)


def _render_messages(messages: list[Any]) -> str:
    """Rows that carry only OpenAI ``messages`` (ingested traces)."""
    lines = []
    for m in messages:
        if not isinstance(m, Mapping) or m.get("role") == "system":
            continue
        role = str(m.get("role"))
        for call in m.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(fn, Mapping):
                lines.append(f"TOOL CALL {fn.get('name')}({fn.get('arguments')})")
        if m.get("content"):
            label = "TOOL RESULT" if role == "tool" else role.upper()
            lines.append(f"{label}: {_text(m.get('content'))[:2000]}")
    return "\n".join(lines)


def parse_verdict(text: str) -> tuple[float, str]:
    """Read ``{"reward": 0|1, "reason": ...}`` (also ``pass``/``verdict`` forms) from a reply.

    Raises:
        ValueError: no usable verdict (the judge retries, then records an error).

    >>> parse_verdict('ok {"reward": 1, "reason": "grounded"}')
    (1.0, 'grounded')
    """
    obj = json_in(text, who="judge")
    if not isinstance(obj, dict):
        raise ValueError("judge reply is not a JSON object")
    raw = obj.get("reward", obj.get("pass", obj.get("verdict", obj.get("score"))))
    if isinstance(raw, str):
        raw = {"pass": 1, "1": 1, "yes": 1, "true": 1, "fail": 0, "0": 0, "no": 0,
               "false": 0}.get(raw.strip().lower())
    if isinstance(raw, bool):
        raw = int(raw)
    if raw not in (0, 1):
        raise ValueError(f"judge reward must be 0 or 1, got {obj.get('reward')!r}")
    return float(raw), str(obj.get("reason") or "")


def read_rubric(rubric: str | Path | None = None, *, spec: object = None) -> str | None:
    """The rubric text: ``rubric=`` (text, or a path to a file), else the spec folder's
    ``rubric.md`` (``spec`` a folder path or an object with ``rubric``), else None."""
    if isinstance(rubric, Path) or (isinstance(rubric, str) and rubric.endswith(".md")
                                    and "\n" not in rubric and Path(rubric).is_file()):
        return Path(rubric).read_text(encoding="utf-8").strip() or None
    if isinstance(rubric, str) and rubric.strip():
        return rubric.strip()
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        path = path / "rubric.md" if path.is_dir() else path.with_name("rubric.md")
        if not path.is_file():
            return None
        return path.read_text(encoding="utf-8").strip() or None
    text = getattr(spec, "rubric", None)
    return text.strip() if isinstance(text, str) and text.strip() else None


class LLMJudge:
    """A chat model as a judge callable: ``judge(row) -> {"reward", "reason", ...}``.

    Extra keys of the verdict (``model``, ``prompt_hash``, ``temperature``) land in
    ``row["judge_meta"]`` through ``run_judge``; ``version`` is ``<model>@<prompt sha>``.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        rubric: str | None = None,
        use_privileged: bool = False,
        temperature: float = 0.0,
        max_tokens: int = 300,
        attempts: int = 2,
    ) -> None:
        self.client = client
        self.rubric = rubric.strip() if rubric and rubric.strip() else None
        self.use_privileged = use_privileged
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.attempts = max(1, attempts)
        criteria = self.rubric or CONDUCT_FLOOR
        self.prompt_hash = prompt_hash(JUDGE_SYSTEM, criteria, use_privileged)
        self.model = client.spec.label
        self.name = f"llm:{self.model}"
        self.version = f"{self.model}@{self.prompt_hash}"
        self.fatal: Exception | None = None

    def close(self) -> None:
        """Close the HTTP sessions."""
        self.client.close()

    def messages(self, row: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat messages sent for ``row``."""
        parts = ["Criteria:", self.rubric or CONDUCT_FLOOR, ""]
        privileged = row.get("privileged")
        if self.use_privileged and isinstance(privileged, Mapping):
            block = {k: privileged[k] for k in _PRIVILEGED_KEYS if privileged.get(k)}
            if block:
                parts += ["Grader-only context (the assistant did not see this):",
                          json.dumps(block, ensure_ascii=False, sort_keys=True, default=str), ""]
        parts += ["Conversation:", render_transcript(row)]
        return [{"role": "system", "content": JUDGE_SYSTEM},
                {"role": "user", "content": "\n".join(parts)}]

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """Grade one row; raise :class:`JudgeError` when the model never gives a verdict."""
        why = ""
        for _ in range(self.attempts):
            try:
                reply = self.client.chat(self.messages(row), max_tokens=self.max_tokens,
                                         temperature=self.temperature)
            except (AuthError, QuotaError) as exc:  # stop every other row at once
                self.fatal = self.fatal or exc
                self.client.stop()
                raise
            try:
                reward, reason = parse_verdict(reply.content)
            except ValueError as exc:
                why = str(exc)
                continue
            return {"reward": reward, "reason": reason, "model": reply.model or self.model,
                    "prompt_hash": self.prompt_hash, "temperature": self.temperature,
                    "rubric": "given" if self.rubric else "conduct_floor"}
        raise JudgeError(f"judge {self.model} gave no verdict in {self.attempts} tries ({why})")


def resolve_judge(
    spec: object = None,
    *,
    rubric: str | None = None,
    use_privileged: bool = False,
    temperature: float = 0.0,
    policy: RetryPolicy | None = None,
    stop: threading.Event | None = None,
) -> LLMJudge | None:
    """An LLM judge callable (row -> verdict dict) for the resolved judge spec, or None."""
    model = resolve_spec("judge", spec)
    if model is None:
        return None
    client = ChatClient(model, role="judge", policy=policy, stop=stop)
    return LLMJudge(client, rubric=rubric, use_privileged=use_privileged,
                    temperature=temperature)


def _same_model(a: str, b: str) -> bool:
    a, b = a.strip().lower(), b.strip().lower()
    return bool(a) and (a == b or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1])


@valid_kwargs
def grade(
    rows: Any,
    judge: Any = None,
    *,
    rubric: str | Path | None = None,
    spec: object = None,
    use_privileged: bool = False,
    workers: int = 8,
    timeout: float | None = 300.0,
    temperature: float = 0.0,
    policy: RetryPolicy | None = None,
    progress: bool = True,
) -> Any:
    """Grade rows with an LLM judge, in place, and return the grade report (a dict).

    Args:
        rows: row dicts, a run (``.trajectories``) or a JSONL path (the graded rows are then
            returned under ``report["rows"]``).
        judge: a backend spec (or None: ``whileai.configure`` / ``WHILEAI_JUDGE``). A plain
            callable is your own judge: the rows are left untouched and a ``ScoredData`` of
            graded copies is returned (``run_judge``).
        rubric: rubric text or a ``rubric.md`` path; else ``spec``'s rubric; else the conduct
            floor only, and the report says so.
        spec: a spec folder (its ``rubric.md``) or an object with ``rubric``; default: the
            run's own spec when ``rows`` is a run.
        use_privileged: let the judge read the row's privileged block.
        workers: parallel judge calls (``run_judge``).
        timeout: seconds per judge call (``run_judge``); None waits.
        temperature: the judge model's sampling temperature.
        policy: the chat client's retry policy (``models.RetryPolicy``).
        progress: one ``grade: done/total rows  rate  ETA`` line on stderr when it is a
            terminal (``run_judge``'s progress line); ``False`` silences it.

    Raises:
        ConfigError: no judge model is configured (the message names ``WHILEAI_JUDGE``).
        AuthError, QuotaError: the judge endpoint refused the key or is out of quota; the
            rows are left as they were.
        TypeError: an unknown keyword (valid ones listed).
    """
    run: dict[str, Any] = {"workers": int(workers), "timeout": timeout,
                           "progress": progress is not False}
    if judge is not None and not isinstance(judge, str) and callable(judge) and \
            not isinstance(judge, LLMJudge):
        return run_judge(rows, judge, **run)
    text = read_rubric(rubric, spec=spec if spec is not None else getattr(rows, "spec", None))
    llm = judge if isinstance(judge, LLMJudge) else resolve_judge(
        judge, rubric=text, use_privileged=bool(use_privileged),
        temperature=float(temperature), policy=policy)
    if llm is None:
        raise ConfigError(no_model_message("judge"))
    row_list = as_rows(rows)
    try:
        scored = run_judge(row_list, llm, name=llm.name, version=llm.version, **run)
    finally:
        if llm is not judge:
            llm.close()
    if llm.fatal is not None:  # a refused key or a spent quota: nothing was written
        raise llm.fatal
    for row, graded in zip(row_list, scored.rows, strict=True):
        row.clear()
        row.update(graded)
    report = grade_report(row_list, llm)
    if isinstance(rows, (str, Path)):
        report["rows"] = row_list
    return report


def grade_report(rows: list[dict[str, Any]], judge: LLMJudge) -> dict[str, Any]:
    """Counts, pass rate, what the judge graded against, and the self-judging check."""
    statuses: dict[str, int] = {}
    for row in rows:
        key = str(row.get("judge_status"))
        statuses[key] = statuses.get(key, 0) + 1
    rewards = [float(r["reward"]) for r in rows if isinstance(r.get("reward"), (int, float))]
    policies = sorted({str(r["model_version"]) for r in rows if r.get("model_version")})
    # the names the judge's server answered as: a bare-URL judge is only a URL until it answers
    judges = {judge.model} | {str(r["judge_meta"]["model"]) for r in rows
                              if isinstance(r.get("judge_meta"), Mapping)
                              and r["judge_meta"].get("model")}
    same = sorted(j for j in judges if any(_same_model(j, p) for p in policies))
    self_judged = bool(same)
    warnings = []
    if judge.rubric is None:
        warnings.append("no rubric: graded the conduct floor only (nothing invented, nothing "
                        "skipped); pass rubric= or add rubric.md to the spec folder")
    if self_judged:
        warnings.append(f"self_judged: the judge {same[0]} also wrote these rollouts; a "
                        "judge prefers its own model's writing, use a different judge")
    failed = len(rows) - statuses.get("ok", 0)
    if failed:
        warnings.append(f"{failed} of {len(rows)} rows got no reward (see judge_status)")
    return {
        "judge": judge.model, "version": judge.version, "prompt_hash": judge.prompt_hash,
        "temperature": judge.temperature, "graded": len(rows), "statuses": statuses,
        "pass_rate": sum(rewards) / len(rewards) if rewards else None,
        "rubric": "given" if judge.rubric else None, "conduct_floor_only": judge.rubric is None,
        "use_privileged": judge.use_privileged, "policy_models": policies,
        "self_judged": self_judged, "warnings": warnings,
    }


def llm_grade_rows(rows: list[dict[str, Any]], judge: Any = None,
                   **kwargs: Any) -> dict[str, Any]:
    """``llm_grade=True``: add ``llm_reward`` (and ``llm_reason``) without touching ``reward``.

    Rows the judge could not grade get ``llm_reward = None`` and are counted.
    """

    llm = judge if isinstance(judge, LLMJudge) else resolve_judge(judge, **kwargs)
    if llm is None:
        raise ConfigError("llm_grade=True needs a judge model: set WHILEAI_JUDGE or "
                          "whileai.configure(judge=...)")
    failed = 0
    try:
        for row in rows:
            try:
                verdict = llm(row)
            except Exception as exc:  # counted; the row keeps its other fields
                failed += 1
                row["llm_reward"], row["llm_reason"] = None, f"{type(exc).__name__}: {exc}"
                continue
            row["llm_reward"], row["llm_reason"] = verdict["reward"], verdict["reason"]
            row["llm_judge_version"] = llm.version
    finally:
        if llm is not judge:
            llm.close()
    return {"judge": llm.model, "version": llm.version, "graded": len(rows) - failed,
            "failed": failed}
