"""Score recorded rollouts under a reference model: ``ref_logprob`` on every row.

For each agent turn the policy recorded ``n_tokens`` for, the conversation up to and including
that turn is sent to the reference server as a prompt to continue (vLLM's chat extension:
``prompt_logprobs``, ``continue_final_message``, ``add_generation_prompt=False``, one output
token), and the log-probabilities of the last ``n_tokens`` prompt tokens are summed. The row's
``ref_logprob`` is the sum over its turns. This needs a vLLM-compatible server; it is an
approximation where the chat template renders a turn differently from how it was sampled (for
example the end-of-turn token), which ``mean_kl`` then shows as a small bias.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai.errors import ConfigError
from whileai.rows.outbound import conversation
from whileai.rows.source import as_rows
from whileai.simulations.models.client import ChatClient
from whileai.simulations.models.resolve import resolve_spec

__all__ = ["reference_logprobs", "turn_token_counts"]


def turn_token_counts(row: Mapping[str, Any]) -> list[int] | None:
    """``n_tokens`` of each agent turn in order (the final reply last), or None if unknown.

    Steps carry a turn's ``n_tokens`` on its first step; the final reply's count is the row's
    total minus the steps'.

    >>> turn_token_counts({"n_tokens": 9, "steps": [{"tool": "f", "n_tokens": 4}]})
    [4, 5]
    """
    total = row.get("n_tokens")
    if not isinstance(total, int) or total <= 0:
        return None
    counts = [int(s["n_tokens"]) for s in row.get("steps") or []
              if isinstance(s, Mapping) and isinstance(s.get("n_tokens"), int)]
    rest = total - sum(counts)
    if rest < 0:
        return None
    return [*counts, rest] if rest > 0 else counts


def _prompt_logprobs(body: Any) -> list[float]:
    raw = body.get("prompt_logprobs") if isinstance(body, dict) else None
    if raw is None and isinstance(body, dict) and body.get("choices"):
        raw = body["choices"][0].get("prompt_logprobs")
    if not isinstance(raw, list):
        raise ValueError("the server returned no prompt_logprobs (is it vLLM?)")
    out: list[float] = []
    for entry in raw:
        if isinstance(entry, dict) and entry:
            first = next(iter(entry.values()))
            value = first.get("logprob") if isinstance(first, dict) else first
            if isinstance(value, (int, float)):
                out.append(float(value))
    return out


def _assistant_indices(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if m.get("role") == "assistant"]


def reference_logprobs(
    data: Any,
    spec: Any,
    *,
    field: str = "ref_logprob",
    system_prompt: str | None = None,
    policy: Any = None,
) -> dict[str, Any]:
    """Write the reference model's summed logprob of each row's generated tokens to ``field``.

    Args:
        data: a run (``.trajectories``), row dicts, or a JSONL path; rows are changed in place
            (for a path, the scored rows are returned under ``report["rows"]``).
        spec: the reference model's backend spec (``"vllm:<model>@<url>"``, ...).
        system_prompt: the agent's system prompt (default: the run's ``system_prompt``).

    Returns:
        ``{"model", "scored", "skipped", "reasons"}``; rows without per-turn ``n_tokens`` or
        whose turns do not line up are skipped and counted by reason.
    """
    model = resolve_spec("agent", spec) if spec is not None else None
    if model is None:
        raise ConfigError("reference_logprobs needs the reference model's spec, for example "
                          "'vllm:Qwen/Qwen3-4B@http://127.0.0.1:8000/v1'")
    if system_prompt is None:
        system_prompt = (getattr(data, "system_prompt", None)
                         or getattr(getattr(data, "spec", None), "policy", None) or None)
    rows = as_rows(data)
    reasons: dict[str, int] = {}
    scored = 0

    def skip(reason: str) -> None:
        reasons[reason] = reasons.get(reason, 0) + 1

    with ChatClient(model, role="reference", policy=policy) as client:
        name = client.model_name()
        for row in rows:
            counts = turn_token_counts(row)
            if counts is None:
                skip("no n_tokens")
                continue
            messages = conversation(row, system_prompt=system_prompt)
            turns = _assistant_indices(messages)
            if len(turns) != len(counts):
                skip("turns do not line up with n_tokens")
                continue
            total = 0.0
            for index, n in zip(turns, counts, strict=True):
                if n == 0:
                    continue
                body = client.request("POST", "/chat/completions", {
                    "model": name, "messages": messages[: index + 1], "max_tokens": 1,
                    "temperature": 0.0, "prompt_logprobs": 0,
                    "add_generation_prompt": False, "continue_final_message": True,
                })
                values = _prompt_logprobs(body)
                if len(values) < n:
                    raise ConfigError(
                        f"{client.url('/chat/completions')} scored {len(values)} prompt tokens, "
                        f"fewer than the {n} the turn generated; is this the same tokenizer?"
                    )
                total += sum(values[-n:])
            row[field] = total
            row[f"{field}_model"] = name
            scored += 1
    report: dict[str, Any] = {"model": name, "field": field, "scored": scored,
                              "skipped": len(rows) - scored, "reasons": reasons}
    if isinstance(data, str) or hasattr(data, "__fspath__"):
        report["rows"] = rows
    return report
