"""``to_trl``: reshape rows already held into what TRL's trainers read.

``kind="training"`` takes training rows (``training_rows`` output, OpenAI wire) or raw rows and
returns conversational ``{"messages", "loss_mask", "prompt_text", ...}`` with argument dicts and
no ``prompt`` string column. ``kind="preference"`` takes pairs (``build_preference_pairs`` output
or OpenAI-shaped preference rows) and returns the prompt/completion split.

>>> rows = [{"prompt": "hi", "messages": [{"role": "user", "content": "hi"},
...          {"role": "assistant", "content": "hello"}], "loss_mask": [0, 1]}]
>>> to_trl(rows, "training")[0]["prompt_text"]
'hi'
"""

from __future__ import annotations

import copy
from typing import Any

from whileai.errors import RowError
from whileai.rows.source import as_rows
from whileai.simulations.export.preference import preference_rows
from whileai.simulations.export.training import training_rows
from whileai.simulations.export.wire import check_choice, messages_to_trl

__all__ = ["KINDS", "to_trl"]

KINDS = ("training", "preference")


def _training(row: dict[str, Any], index: int) -> list[dict[str, Any]]:
    if "steps" in row or "messages" not in row:
        return training_rows([row], format="trl")
    if not isinstance(row["messages"], list):
        raise RowError(f"rows[{index}].messages: expected a list of chat messages")
    out = {k: copy.deepcopy(v) for k, v in row.items() if k not in ("messages", "prompt")}
    out["messages"], _ = messages_to_trl(row["messages"])
    if "loss_mask" not in out:
        out["loss_mask"] = [int(m.get("role") == "assistant") for m in row["messages"]]
    prompt = row.get("prompt")
    out.setdefault("prompt_text", prompt if isinstance(prompt, str) else None)
    return [out]


def to_trl(rows: Any, kind: str = "training") -> list[dict[str, Any]]:
    """Rows in TRL's conversational shape for ``kind`` (``"training"`` or ``"preference"``).

    >>> pair = {"prompt": "hi", "chosen": [{"role": "user", "content": "hi"},
    ...         {"role": "assistant", "content": "Hello"}], "rejected": [
    ...         {"role": "user", "content": "hi"}, {"role": "assistant", "content": "No"}]}
    >>> to_trl([pair], "preference")[0]["rejected"]
    [{'role': 'assistant', 'content': 'No'}]
    """
    check_choice("to_trl", "kind", kind, KINDS)
    if kind == "preference":
        return preference_rows(rows, format="trl")[0]
    return [item for index, row in enumerate(as_rows(rows)) for item in _training(row, index)]
