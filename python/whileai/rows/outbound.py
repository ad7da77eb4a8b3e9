"""Row helpers: the exit filter for teacher-only data, the chat, task keys, export stamps.

``outbound`` is the one filter every door a row leaves the process by applies (files, pushes,
pages, reports, exports): it drops the teacher-only ``privileged`` block and the in-memory
``vector`` at any depth and masks the environment's keys. Judges read the block in memory;
``keep_privileged=True`` is the documented opt-in that keeps it for a private store.

All functions are pure: they never change the row they are given.

>>> row = {"prompt": "hi", "privileged": {"reference": "42"}, "final_text": "hello"}
>>> export_row(row)
{'prompt': 'hi', 'final_text': 'hello', 'schema_version': '1'}
>>> holds_privileged(row), holds_privileged(outbound(row))
(True, False)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

from whileai.errors import RowError
from whileai.rows.depth import loads_limited
from whileai.rows.schema import SCHEMA_VERSION
from whileai.secrets import key_needles, mask_value

__all__ = [
    "DROPPED_KEYS",
    "conversation",
    "export_row",
    "holds_privileged",
    "json_text",
    "outbound",
    "outbound_check",
    "outbound_text_clean",
    "scrub",
    "task_key",
]

# Keys removed at any depth: the teacher-only block (with its principle, hidden_state,
# reference and rubric) and the in-memory embedding.
DROPPED_KEYS = frozenset({"privileged", "vector"})
PRIVILEGED = "privileged"
_KEPT_PRIVILEGED = frozenset({"vector"})  # what a private store (keep_privileged=True) loses
_CHAT_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
_MODEL_CALL_KEYS = ("input_tokens", "output_tokens", "logprob", "n_tokens")
# One encoder for every JSON text a row carries: json.dumps with keywords builds a new one per
# call, which costs more than encoding a small tool result.
_JSON_TEXT = json.JSONEncoder(ensure_ascii=False, default=str)


def json_text(value: Any) -> str:
    """``value`` as compact-spaced JSON text, non-ASCII kept, odd objects via ``str``.

    >>> json_text({"city": "Zürich", "n": 2})
    '{"city": "Zürich", "n": 2}'
    """
    return _JSON_TEXT.encode(value)


def _scrub_text(text: str, drop: frozenset[str]) -> str:
    """A JSON text (a tool result, a tool message) is scrubbed too when it could carry a drop."""
    if not any(f'"{key}"' in text for key in drop):
        return text
    try:
        parsed = loads_limited(text, where="row")
    except ValueError:  # RowError (too deep) is a ValueError too
        return text
    if not isinstance(parsed, (dict, list)):
        return text
    cleaned = _scrub_value(parsed, drop)
    return text if cleaned == parsed else json.dumps(cleaned, ensure_ascii=False)


def _scrub_value(value: Any, drop: frozenset[str]) -> Any:
    if isinstance(value, Mapping):
        return {k: _scrub_value(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_scrub_value(v, drop) for v in value]
    if isinstance(value, tuple):
        return tuple(_scrub_value(v, drop) for v in value)
    if isinstance(value, str):
        return _scrub_text(value, drop)
    return copy.deepcopy(value)  # numbers are returned as they are; other objects copied


def scrub(row: Mapping[str, Any], *, keep_privileged: bool = False) -> dict[str, Any]:
    """A copy of ``row`` without ``privileged`` or ``vector`` at any depth, chat rebuilt.

    Nested dicts, lists, and JSON texts (a tool result stored as a string) are all cleaned.
    When the row has ``steps``, ``messages`` is rebuilt from the cleaned steps (keeping a
    leading system message), so no stale copy of a tool result survives in the chat.
    ``keep_privileged=True`` (a private store only) drops ``vector`` alone.

    >>> scrub({"prompt": "hi", "steps": [{"tool": "t", "result": {"privileged": 1, "ok": 2}}]})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'prompt': 'hi', 'steps': [{'tool': 't', 'result': {'ok': 2}}],
     'messages': [{'role': 'user', 'content': 'hi'},
      {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'call_0', 'type': 'function',
       'function': {'name': 't', 'arguments': '{}'}}]},
      {'role': 'tool', 'tool_call_id': 'call_0', 'content': '{"ok": 2}'}]}
    """
    cleaned: dict[str, Any] = _scrub_value(
        row, _KEPT_PRIVILEGED if keep_privileged else DROPPED_KEYS)
    if isinstance(cleaned.get("steps"), list):
        system = None
        old = cleaned.get("messages")
        first = old[0] if isinstance(old, list) and old else None
        if isinstance(first, Mapping) and first.get("role") == "system":
            content = first.get("content")
            system = content if isinstance(content, str) else None
        cleaned["messages"] = conversation(cleaned, system_prompt=system)
    return cleaned


def holds_privileged(row: Any) -> bool:
    """True when ``privileged`` is a key anywhere in ``row``, JSON texts inside it included.

    >>> holds_privileged({"steps": [{"result": '{"privileged": {"reference": "x"}}'}]})
    True
    >>> holds_privileged({"prompt": "the word privileged alone"})
    False
    """
    if isinstance(row, Mapping):
        return PRIVILEGED in row or any(holds_privileged(v) for v in row.values())
    if isinstance(row, (list, tuple)):
        return any(holds_privileged(v) for v in row)
    if isinstance(row, str) and f'"{PRIVILEGED}"' in row:
        try:
            return holds_privileged(loads_limited(row, where="row"))
        except ValueError:
            return False
    return False


def outbound_check() -> Callable[[str | bytes], bool]:
    """A test ``text -> bool``: True when a row's JSON text (``str``, or its UTF-8 ``bytes``)
    certainly holds nothing ``outbound`` would change (no ``privileged`` or ``vector`` key,
    nested or in a JSON text, and no key of the environment). The environment is read once,
    when the check is made.

    >>> clean = outbound_check()
    >>> clean('{"prompt": "hi"}'), clean(b'{"privileged": {}}')
    (True, False)
    """

    words = ("privileged", '"vector', 'vector\\"', *key_needles())
    as_bytes = tuple(w.encode("utf-8", "surrogatepass") for w in words)

    def clean(text: str | bytes) -> bool:
        found = as_bytes if isinstance(text, bytes) else words
        return not any(word in text for word in found)  # type: ignore[operator]

    return clean


def outbound_text_clean(text: str) -> bool:
    """``outbound_check()(text)``, for one text (make one check for many).

    >>> outbound_text_clean('{"prompt": "hi"}'), outbound_text_clean('{"privileged": {}}')
    (True, False)
    """
    return outbound_check()(text)


def outbound(row: Mapping[str, Any], *, keep_privileged: bool = False) -> dict[str, Any]:
    """The row as it may leave the process: the exit filter every door applies.

    Drops ``privileged`` (unless ``keep_privileged``) and ``vector`` at any depth (``scrub``)
    and masks the environment's keys (:func:`whileai.secrets.mask_value` with
    ``shapes=False``; ``export_row`` masks credential shapes too). A row with nothing to drop
    or mask is returned as it is (do not change it); otherwise a cleaned copy.

    Args:
        row: a row dict, the ``privileged`` block possibly in it.
        keep_privileged: keep the teacher-only block, for a private store you control (never a
            public set: the platform refuses to publish rows holding it).

    Raises:
        RowError: the row nests too deep to walk (see ``jsondepth``).

    >>> outbound({"prompt": "hi", "privileged": {"reference": "42"}})
    {'prompt': 'hi'}
    >>> outbound({"prompt": "hi", "privileged": {"reference": "42"}}, keep_privileged=True)
    {'prompt': 'hi', 'privileged': {'reference': '42'}}
    """
    try:
        if outbound_text_clean(json_text(row)):
            return row if isinstance(row, dict) else dict(row)
        cleaned: dict[str, Any] = mask_value(scrub(row, keep_privileged=keep_privileged),
                                             shapes=False)
    except RecursionError:
        from whileai.rows.depth import deep_error
        raise deep_error("row") from None
    return cleaned


def _as_json_text(value: Any, empty: str) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return empty
    return json_text(value)


def _tool_call(step: Mapping[str, Any], call_id: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {
            "name": step["tool"],
            "arguments": _as_json_text(step.get("arguments"), "{}"),
        },
    }


def _tool_result(step: Mapping[str, Any]) -> str:
    if "result" not in step and "error" in step:
        return _as_json_text({"error": step["error"]}, "null")
    return _as_json_text(step.get("result"), "null")


def conversation(row: Mapping[str, Any], system_prompt: str | None = None) -> list[dict[str, Any]]:
    """Rebuild OpenAI-style chat messages from ``prompt``, ``steps`` and ``final_text``.

    Consecutive tool steps of one agent turn become one assistant message with several
    ``tool_calls``, each answered by a ``tool`` message. A tool step starts a new turn when its
    ``turn`` key differs from the previous step's or, for steps without ``turn``, when it carries
    a model call's fields (``input_tokens``, ``output_tokens``, ``logprob``, ``n_tokens``).
    An assistant text step right before the calls (same reply) becomes that message's content.
    Call ids come from ``call_id``, else ``call_<n>`` (n counts the row's tool steps from 0).
    ``final_text`` closes the chat unless the last assistant message already says it.

    >>> conversation({"prompt": "hi", "final_text": "hello"}, system_prompt="Be brief.")
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'},
     {'role': 'assistant', 'content': 'hello'}]
    """
    messages: list[dict[str, Any]] = []
    if system_prompt is not None:
        messages.append({"role": "system", "content": system_prompt})
    prompt = row.get("prompt")
    if isinstance(prompt, str) and prompt:
        messages.append({"role": "user", "content": prompt})
    steps = row.get("steps") or []
    pending_results: list[dict[str, Any]] = []  # tool messages owed to the open assistant turn
    open_turn: dict[str, Any] = {}  # the assistant message collecting this turn's calls
    previous_turn: Any = None  # the `turn` of the step before
    n_tool = 0
    for index, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise RowError(f"steps[{index}]: expected an object (dict), got {type(step).__name__}")
        if "tool" not in step:
            messages.extend(pending_results)
            pending_results, open_turn = [], {}
            messages.append({k: copy.deepcopy(step[k]) for k in _CHAT_KEYS if k in step})
            previous_turn = step.get("turn")
            continue
        if "turn" in step:
            new_reply = step["turn"] != previous_turn
        else:  # a step carrying a model call's fields is the first call of a new reply
            new_reply = any(k in step for k in _MODEL_CALL_KEYS)
        if not open_turn or new_reply:
            messages.extend(pending_results)
            pending_results = []
            last = messages[-1] if messages else {}
            if not new_reply and last.get("role") == "assistant" and "tool_calls" not in last:
                open_turn = last  # the agent's text right before its calls: one message
            else:
                open_turn = {"role": "assistant", "content": None}
                messages.append(open_turn)
            open_turn["tool_calls"] = []
        call_id = step.get("call_id")
        call_id = call_id if isinstance(call_id, str) and call_id else f"call_{n_tool}"
        n_tool += 1
        open_turn["tool_calls"].append(_tool_call(step, call_id))
        pending_results.append(
            {"role": "tool", "tool_call_id": call_id, "content": _tool_result(step)}
        )
        previous_turn = step.get("turn")
    messages.extend(pending_results)
    final = row.get("final_text")
    if isinstance(final, str) and final:
        last = messages[-1] if messages else {}
        if not (last.get("role") == "assistant" and "tool_calls" not in last
                and last.get("content") == final):
            messages.append({"role": "assistant", "content": final})
    return messages


def task_key(row: Mapping[str, Any], *, where: str = "row") -> str:
    """The key that groups a row's repeats: ``scenario_id``, else ``task_id``, else ``prompt``.

    >>> task_key({"scenario_id": "sc-0123456789", "prompt": "hi"}), task_key({"prompt": "hi"})
    ('sc-0123456789', 'hi')
    """
    if not isinstance(row, Mapping):
        raise RowError(f"{where}: expected a row dict, got {type(row).__name__}")
    for key in ("scenario_id", "task_id", "prompt"):
        value = row.get(key)
        if isinstance(value, str) and value:
            return value
    raise RowError(
        f"{where} has no task key: none of scenario_id, task_id, prompt is a non-empty string "
        f"(keys: {sorted(row)[:10]}). Set one so repeats of the same ask group together."
    )


def export_row(row: Mapping[str, Any], *, keep_privileged: bool = False) -> dict[str, Any]:
    """The row as it may leave the run: ``scrub``-bed, credential-shaped text masked
    (:func:`whileai.secrets.mask_value`), and stamped ``schema_version`` ``"1"``.
    ``keep_privileged`` as in ``outbound`` (a private store only).

    Raises ``RowError`` when the row nests too deep to walk (see ``jsondepth``).

    >>> export_row({"prompt": "hi", "vector": [0.1, 0.2]})
    {'prompt': 'hi', 'schema_version': '1'}
    """
    try:
        cleaned: dict[str, Any] = mask_value(scrub(row, keep_privileged=keep_privileged))
    except RecursionError:
        from whileai.rows.depth import deep_error
        raise deep_error("row") from None
    cleaned["schema_version"] = SCHEMA_VERSION
    return cleaned
