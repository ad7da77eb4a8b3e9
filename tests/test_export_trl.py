"""The TRL shapes against the real consumers: `datasets` loads them, TRL renders them.

Skips when the `trl` extra (trl, datasets, transformers, jinja2, tokenizers) is absent. Nothing is
downloaded: the tokenizer is a word-level one built here, with a chat template that renders tool
calls (arguments through `tojson`) and tool results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import GET_ORDER

pytest.importorskip("datasets")
pytest.importorskip("tokenizers")
pytest.importorskip("transformers")
data_utils = pytest.importorskip("trl.data_utils")

TOOLS = [
    GET_ORDER,
    {"type": "function", "function": {
        "name": "search_orders", "description": "Search orders.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"},
                                                        "limit": {"type": "integer"}}}}},
]

TEMPLATE = (
    "{% if tools %}<tools>{% for t in tools %}{{ t.function.name }} {% endfor %}</tools>\n"
    "{% endif %}"
    "{% for m in messages %}<|{{ m.role }}|>"
    "{% if m.content %}{{ m.content }}{% endif %}"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<call>{{ c.function.name }} "
    "{{ c.function.arguments | tojson }}</call>{% endfor %}{% endif %}"
    "{% if m.role == 'tool' %}<id>{{ m.tool_call_id }}</id>{% endif %}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

ROWS = [
    {"scenario_id": "sc-000000000a", "prompt": "Where is order 4412?",
     "steps": [{"tool": "get_order", "arguments": {"order_id": "4412"},
                "result": {"status": "ok", "data": {"status": "late"}}, "call_id": "c1"}],
     "final_text": "Order 4412 is late.", "reward": 1.0, "privileged": {"reference": "SECRET"}},
    {"scenario_id": "sc-000000000a", "prompt": "Where is order 4412?",
     "steps": [{"tool": "search_orders", "arguments": {"query": "4412", "limit": 3},
                "result": {"status": "error", "error": "timeout"}, "call_id": "c9"}],
     "final_text": "It shipped.", "reward": 0.0},
    {"scenario_id": "sc-000000000b", "prompt": "Hello?", "final_text": "Hi, how can I help?",
     "reward": 1.0},
]


def _tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel({"[UNK]": 0, "<|end|>": 1}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]",
                                   eos_token="<|end|>", chat_template=TEMPLATE)


def _load(path: Path) -> Any:
    import datasets

    return datasets.load_dataset("json", data_files=str(path), split="train",
                                 cache_dir=str(path.parent / "cache"))


def _tools(example: dict[str, Any]) -> Any:
    tools = example.get("tools")
    return json.loads(tools) if isinstance(tools, str) else tools


def test_sft_file_renders_through_trl(offline: Path) -> None:
    out = offline / "sft.jsonl"
    report = zps.export_dataset(ROWS, out, format="trl", tools=TOOLS, system_prompt="Help.")
    assert report["tool_call_roundtrip"] == {"encoding": "dict", "checked": 2, "invalid": 0,
                                             "examples": []}
    dataset = _load(out)
    assert "prompt" not in dataset.column_names  # else TRL skips the chat template
    tokenizer = _tokenizer()
    rendered = []
    for example in dataset:
        assert data_utils.is_conversational(example)
        text = data_utils.maybe_apply_chat_template(
            {"messages": example["messages"]}, tokenizer, tools=_tools(example))["text"]
        rendered.append(text)
        assert len(example["loss_mask"]) == len(example["messages"])
    assert '<call>get_order {"order_id": "4412"}</call>' in rendered[0]
    assert "<|tool|>" in rendered[0]
    assert "<id>c1</id>" in rendered[0]
    assert '"limit": 3' in rendered[1]
    assert '"query": "4412"' in rendered[1]
    assert "null" not in rendered[0] + rendered[1]  # no key invented by a columnar union
    assert '\\"' not in rendered[0]  # arguments are an object, not a JSON string quoted twice
    assert "<tools>get_order search_orders </tools>" in rendered[0]
    assert all("SECRET" not in text for text in rendered)


def test_openai_prompt_column_is_what_trl_would_skip(offline: Path) -> None:
    [row] = zps.training_rows(ROWS[:1], format="openai")
    with pytest.raises(KeyError):  # a `prompt` string beside `messages` is not a TRL shape
        data_utils.apply_chat_template(
            {"messages": row["messages"], "prompt": row["prompt"]}, _tokenizer())
    [trl] = zps.to_trl([row], "training")
    assert "prompt" not in trl
    assert data_utils.is_conversational(trl)
    assert trl["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"order_id": "4412"}


def test_preference_file_renders_through_trl(offline: Path) -> None:
    pairs, _ = zps.build_preference_pairs(ROWS)
    out = offline / "dpo.jsonl"
    report = zps.export_preference(pairs, out, format="trl", tools=TOOLS, system_prompt="Help.")
    assert report["pairs_out"] == 1
    dataset = _load(out)
    tokenizer = _tokenizer()
    for example in dataset:
        assert [m["role"] for m in example["prompt"]] == ["system", "user"]
        assert example["chosen"][0]["role"] == "assistant"
        assert example["rejected"][0]["role"] == "assistant"
        assert data_utils.is_conversational(example)
        shaped = {k: example[k] for k in ("prompt", "chosen", "rejected")}
        text = data_utils.maybe_apply_chat_template(shaped, tokenizer, tools=_tools(example))
        assert text["prompt"].endswith("<|assistant|>")
        assert '<call>get_order {"order_id": "4412"}</call>' in text["chosen"]
        assert "Order 4412 is late." in text["chosen"]
        assert "search_orders" in text["rejected"]
        assert "It shipped." in text["rejected"]
        assert "Where is order 4412?" not in text["chosen"]


def test_openai_preference_shape_is_not_trl(offline: Path) -> None:
    pairs, _ = zps.build_preference_pairs(ROWS)
    rows, _ = zps.export.preference.preference_rows(pairs, format="openai")
    assert isinstance(rows[0]["prompt"], str)
    assert rows[0]["chosen"][0]["role"] == "user"  # whole chats on both sides
    [trl] = zps.to_trl(rows, "preference")
    assert trl["prompt"] == [{"role": "user", "content": "Where is order 4412?"}]
    assert trl["chosen"][0]["tool_calls"][0]["function"]["arguments"] == {"order_id": "4412"}
