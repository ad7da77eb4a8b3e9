"""Every dataset call of spec 002 against a real ``whileai serve`` (see platform_server.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from platform_server import require_server_extra
from whileai.errors import PublishGateError, RowError
from whileai.platform import NotFoundError, PlatformError

require_server_extra()


@pytest.fixture
def key(platform_key: str) -> str:
    """A fresh account per test (conftest's ``platform_key``)."""
    return platform_key


def rl_rows(tasks: int = 4, k: int = 2) -> list[dict[str, Any]]:
    """Graded RL rows: every task has one pass and one fail (a mixed group)."""
    return [
        {"scenario_id": f"t{t}", "prompt": f"question number {t} about order {t * 7}",
         "final_text": f"answer {t}.{r}", "reward": float(r % 2 == 0),
         "steps": [{"tool": "get_order", "arguments": {"id": t}, "result": {"ok": r}}]}
        for t in range(tasks) for r in range(k)
    ]


def test_push_rows_then_pull_returns_exactly_the_rows(key: str, tmp_path: Path) -> None:
    rows = [{"prompt": f"p{i} é ✓", "reward": i % 2, "nested": {"x": [i, None]}}
            for i in range(250)]
    entry = zps.push_rows(rows, "exact", agent="bot", description="round trip")
    assert entry["datasetId"].startswith("ds_")
    assert (entry["rows"], entry["name"], entry["agent"]) == (250, "exact", "bot")
    assert zps.pull(entry["datasetId"]) == rows
    path = zps.pull(entry["datasetId"], str(tmp_path / "out" / "rows.jsonl"))
    assert path == str(tmp_path / "out" / "rows.jsonl")
    assert [json.loads(line) for line in Path(path).read_text().splitlines()] == rows


def test_datasets_lists_newest_first_with_storage(key: str) -> None:
    first = zps.push_rows([{"prompt": "a"}], "first")
    second = zps.push_rows([{"prompt": "b"}, {"prompt": "c"}], "second")
    listing = zps.datasets()
    assert [d["datasetId"] for d in listing["datasets"]] == [second["datasetId"],
                                                            first["datasetId"]]
    assert listing["storageBytes"] == first["bytes"] + second["bytes"] > 0


def test_update_changes_only_the_fields_given(key: str) -> None:
    entry = zps.push_rows([{"prompt": "a"}], "u", mode="rl", agent="a1", description="d")
    changed = zps.update_dataset(entry["datasetId"], purpose="eval")
    assert (changed["purpose"], changed["mode"], changed["agent"], changed["description"]) == (
        "eval", "rl", "a1", "d")
    with pytest.raises(PlatformError, match="purpose must be one of"):
        zps.update_dataset(entry["datasetId"], purpose="nonsense")


def test_delete_and_delete_empty(key: str) -> None:
    empty = zps.push_rows([], "empty")
    small = zps.push_rows([{"prompt": "a"}], "small")
    big = zps.push_rows([{"prompt": str(i)} for i in range(5)], "big")
    assert empty["rows"] == 0
    assert empty["bytes"] == 0
    dry = zps.delete_empty_datasets(dry_run=True)
    assert dry["deleted"] == [empty["datasetId"]]
    assert len(zps.datasets()["datasets"]) == 3
    gone = zps.delete_empty_datasets(max_rows=1)
    assert gone["deleted"] == [empty["datasetId"], small["datasetId"]]
    assert [d["datasetId"] for d in zps.datasets()["datasets"]] == [big["datasetId"]]
    assert zps.delete_dataset(big["datasetId"])["deleted"] is True
    with pytest.raises(NotFoundError, match=big["datasetId"]):
        zps.pull(big["datasetId"])
    assert zps.datasets()["count"] == 0


def test_preview_and_profile(key: str) -> None:
    rows = [*rl_rows(), {"scenario_id": "solo", "prompt": "x", "reward": 1.0,
                         "steps": [], "input_tokens": 7}]
    entry = zps.push_rows(rows, "prof")
    seen = zps.preview(entry["datasetId"])
    assert seen["sample"] == rows[:3]
    assert seen["report"]["rows"] == len(rows)
    prof = zps.profile(entry["datasetId"])
    assert prof["cached"] is False
    assert (prof["rows"], prof["graded"], prof["tasks"], prof["mixed_tasks"]) == (9, 9, 5, 4)
    assert prof["pass_rate"] == round(5 / 9, 4)
    assert prof["gradient_support"] == round(8 / 9, 4)
    assert prof["tool_use"] == {"rows_with_tools": 8, "tool_calls": 8,
                                "by_tool": {"get_order": 8}}
    assert prof["tokens"]["reported"] == 7
    assert prof["per_task_pass_rate"] == {"t0": 0.5, "t1": 0.5, "t2": 0.5, "t3": 0.5, "solo": 1.0}
    again = zps.profile(entry["datasetId"])
    assert again["cached"] is True
    assert again["computedAt"] == prof["computedAt"]
    assert zps.profile(entry["datasetId"], force=True)["cached"] is False


def test_publish_catalog_and_anonymous_pull(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"prompt": "public row"}]
    entry = zps.push_rows(rows, "pub")
    with pytest.raises(Exception, match="holds no rows"):
        zps.publish(zps.push_rows([], "nothing")["datasetId"], "airline")
    card = zps.publish(entry["datasetId"], "airline", description="a card")
    assert (card["agent"], card["description"], card["rows"]) == ("airline", "a card", 1)
    monkeypatch.delenv("WHILEAI_API_KEY")
    listed = zps.catalog()
    assert entry["datasetId"] in [c["datasetId"] for c in listed["datasets"]]
    assert "airline" in [a["agent"] for a in listed["agents"]]
    assert zps.pull(entry["datasetId"]) == rows  # no key needed for a public set
    monkeypatch.setenv("WHILEAI_API_KEY", key)
    assert zps.unpublish(entry["datasetId"])["public"] is False
    monkeypatch.delenv("WHILEAI_API_KEY")
    with pytest.raises(NotFoundError, match="not public"):
        zps.pull(entry["datasetId"])


def test_agents_register_and_purge(key: str) -> None:
    zps.push_rows([{"prompt": "a"}], "t", agent="helper", purpose="train")
    with pytest.warns(UserWarning, match="1 tasks can only prove a gain"):
        zps.push_rows([{"prompt": "b"}], "h", agent="helper", purpose="holdout")
    record = zps.register_agent("helper", description="answers", tools=[{"name": "get"}],
                                system_prompt="be kind")
    assert (record["description"], record["tools"]) == ("answers", [{"name": "get"}])
    zps.register_agent("lonely")
    listed = {a["agent"]: a for a in zps.agents()}
    assert listed["helper"]["datasets"] == {"train": 1, "holdout": 1}
    assert listed["helper"]["traces"] == 0
    assert listed["lonely"]["datasets"] == {}
    dry = zps.purge_agent("helper", dry_run=True)
    assert (dry["datasets"], dry["deleted"]) == (2, False)
    assert zps.datasets()["count"] == 2
    done = zps.purge_agent("helper")
    assert (done["agent"], done["datasets"], done["deleted"]) == ("helper", 2, True)
    assert zps.datasets()["count"] == 0
    assert [a["agent"] for a in zps.agents()] == ["lonely"]
    with pytest.raises(NotFoundError):
        zps.purge_agent("helper")


def test_push_file_gates_by_default_and_refuses_bad_jsonl(key: str, tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    zps.write_jsonl(good, rl_rows())
    entry = zps.push_file(str(good))
    assert entry["name"] == "good.jsonl"
    assert entry["gate"]["ok"] is True
    pulled = zps.pull(entry["datasetId"])
    assert all("calibration" in row for row in pulled)  # the stamped rows went up
    raw = zps.push_file(str(good), name="raw", gate=False)
    assert Path(zps.pull(raw["datasetId"], str(tmp_path / "raw.jsonl"))).read_bytes() == \
        good.read_bytes()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "a"}\n{oops\n')
    before = zps.datasets()["count"]
    for gate in (True, False):
        with pytest.raises(RowError, match=r"bad\.jsonl:2"):
            zps.push_file(str(bad), gate=gate)
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"prompt": "a"}\n{"x": ' + "[" * 300 + "]" * 300 + "}\n")
    with pytest.raises(RowError, match=r"deep\.jsonl:2: JSON nested deeper"):
        zps.push_file(str(deep), gate=False)
    assert zps.datasets()["count"] == before


def test_refused_gate_stores_nothing(key: str) -> None:
    ungraded = [{"scenario_id": "t", "prompt": "q", "final_text": str(i)} for i in range(2)]
    run = zps.SimulationData(trajectories=ungraded, search={}, stopped_because="budget",
                             mode="rl")
    with pytest.raises(PublishGateError, match="none is graded"):
        run.push("refused")
    with pytest.raises(PublishGateError):
        zps.push_rows(ungraded, "refused", gate=True)
    assert zps.datasets()["count"] == 0


def test_data_push_with_holdout_parent_and_publish(key: str) -> None:
    run = zps.SimulationData(trajectories=rl_rows(tasks=10), search={},
                             stopped_because="budget", mode="rl")
    base = run.push("base", agent="shop")
    assert base["gate"]["ok"] is True
    assert base["rows"] == 20
    with pytest.warns(UserWarning, match="3 tasks can only prove"):
        entry = run.push("iter", parent=base["datasetId"], holdout=0.3, agent="shop",
                         publish=True)
    held = entry["holdout"]
    assert entry["parentId"] == base["datasetId"]
    assert (held["purpose"], held["linkedId"], entry["linkedId"]) == (
        "holdout", entry["datasetId"], held["datasetId"])
    train_tasks = {r["scenario_id"] for r in zps.pull(entry["datasetId"])}
    held_tasks = {r["scenario_id"] for r in zps.pull(held["datasetId"])}
    assert train_tasks
    assert held_tasks
    assert not train_tasks & held_tasks
    assert len(train_tasks | held_tasks) == 10
    assert entry["card"]["agent"] == "shop"
    with pytest.raises(NotFoundError, match="ds_nope"):
        run.push("orphan", parent="ds_nope")


def test_scored_push(key: str) -> None:
    scored = zps.ScoredData(rows=rl_rows())
    entry = scored.push("scored", gate=True)
    assert entry["rows"] == 8
    assert entry["gate"]["mode"] == "rl"


def test_decontaminate_against_a_dataset_id(key: str) -> None:
    text = "please cancel my order number 4412 because it arrived broken and late today"
    evals = zps.push_rows([{"prompt": text}], "evals", purpose="eval")
    train = [{"prompt": text}, {"prompt": "an unrelated question about shipping costs abroad"}]
    clean, report = zps.decontaminate(train, against=[evals["datasetId"]])
    assert clean == [train[1]]
    assert report["dropped"] == 1
    with pytest.raises(NotFoundError, match="ds_0000"):
        zps.decontaminate(train, against=["ds_0000"])


def test_simulate_reruns_tasks_from_a_dataset_id(key: str) -> None:
    tools = [{"name": "get_order", "description": "Look up an order.",
              "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                             "required": ["order_id"]}}]
    quiet = {"simulator": False, "progress": False}
    first = zps.simulate(zps.seeded_agent(tools), tools=tools, mode="rl", repeats=2,
                         repeat_policy="fixed", budget=8, **quiet)
    entry = first.push("tasks", gate=False)
    again = zps.simulate(zps.seeded_agent(tools, seed=3), tools=tools, tasks=entry["datasetId"],
                         budget=100, **quiet)
    assert again.stopped_because == "tasks_done"
    assert {r["scenario_id"] for r in again} == {r["scenario_id"] for r in first}
    with pytest.raises(NotFoundError, match="ds_0000"):
        zps.simulate(zps.seeded_agent(tools), tools=tools, tasks="ds_0000", budget=4, **quiet)
