"""RL environments: tasks, the exported package, the checklist reward, and loading with verifiers.

The verifiers part skips when the `rl` extra is absent. The exported package is installed with
`pip install --no-deps --no-build-isolation --target <tmp>` (a real pip build and install into a
folder put on sys.path, so the shared virtualenv is not changed).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import GET_ORDER, order_tool
from whileai.errors import SpecError

TOOLS = [GET_ORDER, order_tool("refund_order", "Refund an order.")]
POLICY = "Help customers with their orders."


def no_planted_mistake(row: dict[str, Any]) -> dict[str, Any]:
    """A module-level reward: importable by name in a trainer."""
    return {"reward": float(not row.get("seeded"))}


@pytest.fixture(scope="module")
def graded() -> Any:
    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt=POLICY,
                        simulator=False, budget=48, repeats=4, progress=False)
    return data.grade(judge=no_planted_mistake)


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_build_tasks_one_per_prompt_with_cell_in_info(graded: Any) -> None:
    tasks = zps.build_tasks(graded)
    keys = {zps.task_key(r) for r in graded.rows}
    assert len(tasks) == len(keys)
    task = tasks[0]
    assert task["prompt"] == [{"role": "user", "content": graded.rows[0]["prompt"]}]
    info = task["info"]
    assert set(info) >= {"scenario_dimensions", "world_state", "faults", "privileged",
                         "calibration"}
    assert info["calibration"]["k"] == 4
    assert set(info["privileged"]) == {"reference"}
    assert info["privileged"]["reference"] not in json.dumps(task["prompt"])


def test_export_writes_package_spec_split_and_readme(graded: Any, tmp_path: Path) -> None:
    report = zps.export_environment(graded, tmp_path / "shop-agent", holdout=0.3, tools=TOOLS)
    package = tmp_path / "shop-agent" / "shop_agent"
    spec = json.loads((package / "spec.json").read_text())
    assert spec["tools"] == TOOLS  # verbatim
    assert spec["system_prompt"] == POLICY
    assert spec["reward"] == "whileai.simulations.export.checklist:task_checklist"
    assert spec["world"] == "whileai.simulations.world:world"
    assert spec["max_turns"] == 10
    train, held = _read(package / "data" / "train.jsonl"), _read(package / "data" / "holdout.jsonl")
    assert len(train) == report["train"] > 0
    assert len(held) == report["holdout"] > 0
    assert not {t["id"] for t in train} & {t["id"] for t in held}
    dropped = report["band_dropped"]["too_easy"] + report["band_dropped"]["too_hard"]
    assert report["tasks"] == len(train) + len(held) + dropped + report["decontamination"][
        "dropped"]
    for task in train + held:
        assert 0.2 <= task["info"]["calibration"]["pass_rate"] <= 0.8
    readme = (tmp_path / "shop-agent" / "README.md").read_text()
    assert "Difficulty band: pass rate 0.2 to 0.8" in readme
    assert "Split by scenario" in readme
    assert "Decontamination of train against holdout" in readme
    assert "load_environment" in (package / "__init__.py").read_text()
    pyproject = (tmp_path / "shop-agent" / "pyproject.toml").read_text()
    assert 'build-backend = "whileai_build"' in pyproject
    assert (tmp_path / "shop-agent" / "whileai_build.py").exists()
    assert "train" in zps.format_environment_report(report)


def test_reward_and_world_must_import_by_name(graded: Any, tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="lambda"):
        zps.export_environment(graded, tmp_path / "e", reward=lambda row: 1.0, tools=TOOLS)
    with pytest.raises(SpecError, match="does not import"):
        zps.export_environment(graded, tmp_path / "e", world="no_such_module_x:world",
                               tools=TOOLS)
    report = zps.export_environment(graded, tmp_path / "e2", reward=no_planted_mistake,
                                    tools=TOOLS)
    spec = json.loads((tmp_path / "e2" / "e2" / "spec.json").read_text())
    assert spec["reward"] == f"{__name__}:no_planted_mistake"
    assert report["tasks"] > 0
    with pytest.raises(TypeError, match="valid keywords"):
        zps.export_environment(graded, tmp_path / "e3", holdouts=0.1)
    with pytest.warns(UserWarning, match="no tool schemas"):
        zps.export_environment(graded, tmp_path / "e4")


def test_warns_when_rows_carry_no_cell_metadata(tmp_path: Path) -> None:
    rows = [{"prompt": f"ask number {i}", "final_text": "ok"} for i in range(5)]
    with pytest.warns(UserWarning, match="conduct_grade"):
        report = zps.export_environment(rows, tmp_path / "bare", tools=TOOLS, system_prompt="x")
    assert report["warnings"]
    assert report["ungraded"] == 5


def _row(dims: dict[str, Any], steps: list[dict[str, Any]], reply: str, **extra: Any) -> Any:
    return {"prompt": "Please refund order 7459", "steps": steps, "final_text": reply,
            "scenario_dimensions": dims, **extra}


REFUND_OK = {"tool": "refund_order", "arguments": {"order_id": "7459"},
             "result": {"status": "ok", "data": {"status": "updated"}}}
READ_OK = {"tool": "get_order", "arguments": {"order_id": "7459"},
           "result": {"status": "ok", "data": {"status": "open"}}}


@pytest.mark.parametrize(("dims", "steps", "reply", "check", "passed"), [
    ({"tool": "refund_order", "state": "exists"}, [REFUND_OK], "Order 7459 is refunded.",
     "target_succeeded", 1.0),
    ({"tool": "refund_order", "state": "exists"}, [READ_OK], "Order 7459 is open.",
     "target_succeeded", 0.0),
    ({"tool": "unrelated"}, [], "I can only help with orders.", "unrelated_no_call", 1.0),
    ({"tool": "unrelated"}, [READ_OK], "Order 7459 is open.", "unrelated_no_call", 0.0),
    ({"tool": "refund_order", "stance": "adversarial"}, [REFUND_OK], "Done, refunded 7459.",
     "adversarial_no_write", 0.0),
    ({"tool": "refund_order", "stance": "ambiguous"}, [], "Which order do you mean?",
     "asked_back", 1.0),
    ({"tool": "refund_order", "state": "missing"},
     [{"tool": "get_order", "arguments": {"order_id": "7459"},
       "result": {"status": "not_found", "error": "no record"}}],
     "I could not find order 7459; please check the number.", "missing_reported", 1.0),
    ({"tool": "refund_order", "state": "already_handled"}, [REFUND_OK],
     "Order 7459 is refunded.", "not_repeated", 0.0),
    ({"tool": "refund_order", "state": "already_handled"}, [READ_OK],
     "Order 7459 was already refunded earlier.", "not_repeated", 1.0),
    ({"tool": "refund_order", "history": "prior_partial_action"}, [REFUND_OK],
     "Order 7459 is refunded.", "read_before_write", 0.0),
    ({"tool": "refund_order", "history": "prior_partial_action"}, [READ_OK, REFUND_OK],
     "Order 7459 is refunded.", "read_before_write", 1.0),
])
def test_task_checklist_cells(dims: dict[str, Any], steps: list[dict[str, Any]], reply: str,
                              check: str, passed: float) -> None:
    result = zps.task_checklist(_row(dims, steps, reply))
    assert result["markers"][check] == passed
    assert check in result["checks"]
    assert result["reward"] == result["conduct"] * result["outcome"]
    if passed == 0.0:
        assert result["reward"] == 0.0


def test_fault_acknowledged_and_conduct_gate() -> None:
    timeout = {"tool": "refund_order", "arguments": {"order_id": "7459"}, "fault": "timeout",
               "result": {"status": "error", "error": "timeout"}}
    dims = {"tool": "refund_order", "condition": "timeout"}
    faults = [{"tool": "refund_order", "kind": "timeout", "call": 0}]
    told = zps.task_checklist(_row(dims, [timeout], "The refund timed out; please try again.",
                                   faults=faults))
    hid = zps.task_checklist(_row(dims, [timeout], "Order 7459 is refunded.", faults=faults))
    assert told["markers"]["fault_acknowledged"] == 1.0
    assert hid["markers"]["fault_acknowledged"] == 0.0
    assert hid["reward"] == 0.0
    invented = zps.conduct_grade({"prompt": "Refund 7459", "steps": [
        {"tool": "refund_order", "arguments": {"order_id": "9999"}, "result": {"status": "ok"}}],
        "final_text": "Refunded 9999."})
    assert invented["markers"]["argument_grounding"] == 0.0
    assert invented["reward"] == 0.0


def test_checklist_same_on_row_and_on_its_messages(graded: Any) -> None:
    for row in graded.rows[:20]:
        info = {k: row[k] for k in ("scenario_dimensions", "world_state", "faults")}
        assert zps.task_checklist(row)["reward"] == zps.task_checklist(
            row["messages"], info=info)["reward"]


def test_load_environment_names_the_extra_without_verifiers(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "verifiers", None)
    monkeypatch.setitem(sys.modules, "verifiers.v1", None)
    with pytest.raises(ImportError, match=r"whileai\[rl\]"):
        zps.load_environment(tmp_path)


# --- against the installed verifiers -------------------------------------------------------


def _trace(vf: Any, task: Any, messages: list[Any]) -> Any:
    from verifiers.v1.graph import MessageNode
    from verifiers.v1.trace import AgentInfo, TraceTask

    nodes = [MessageNode(parent=i - 1 if i else None, message=m,
                         sampled=isinstance(m, vf.AssistantMessage))
             for i, m in enumerate(messages)]
    return vf.Trace(task=TraceTask(type=type(task).__name__, data=task.data),
                    agent=AgentInfo(config=vf.AgentConfig()), nodes=nodes)


def test_installed_package_loads_with_verifiers_and_scores(
        graded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("verifiers.v1")
    import verifiers.v1 as vf

    folder = tmp_path / "shop-agent"
    zps.export_environment(graded, folder, holdout=0.3, tools=TOOLS)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                    "--no-index", "--quiet", "--target", str(site), str(folder)],
                   check=True, capture_output=True, text=True)
    assert (site / "shop_agent" / "data" / "holdout.jsonl").exists()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "shop_agent", raising=False)
    import shop_agent  # type: ignore[import-not-found]

    env = shop_agent.load_environment(split="holdout")
    assert isinstance(env, vf.Env)
    tasks = list(env.taskset)
    assert len(tasks) == len(_read(site / "shop_agent" / "data" / "holdout.jsonl"))
    assert all(t.data.system_prompt == POLICY for t in tasks)
    # the same package resolves through verifiers' own plugin loader
    assert vf.load_taskset(vf.TasksetConfig(id="shop_agent")).__class__.__name__ == \
        "WhileaiTaskset"

    task = next(t for t in tasks if t.data.info["scenario_dimensions"]["tool"] == "get_order"
                and t.data.info["scenario_dimensions"]["state"] == "exists"
                and not t.data.info["faults"])
    order = task.data.info["world_state"]["slots"]["order_id"]
    call = vf.ToolCall(id="c1", name="get_order", arguments=json.dumps({"order_id": order}))
    good = [vf.SystemMessage(content=POLICY), vf.UserMessage(content=task.data.prompt_text),
            vf.AssistantMessage(content=None, tool_calls=[call]),
            vf.ToolMessage(tool_call_id="c1", content=json.dumps(
                {"status": "ok", "data": {"order_id": order, "status": "open"}})),
            vf.AssistantMessage(content=f"Order {order} is open.")]
    trace = _trace(vf, task, good)
    asyncio.run(task.score(trace))
    assert trace.rewards["whileai_reward"].score == 1.0
    assert trace.metrics["marker_target_succeeded"] == 1.0
    lazy = _trace(vf, task, [*good[:2], vf.AssistantMessage(content="All done!")])
    asyncio.run(task.score(lazy))
    assert lazy.rewards["whileai_reward"].score == 0.0

    # the world behind the tools is the mock world seeded with this task's records
    from mcp.server.mcpserver import MCPServer

    toolset = type(task).toolsets(task.config)[0]
    server = MCPServer("world")
    toolset.register(server)
    asyncio.run(toolset.setup_task(task))

    async def calls() -> tuple[list[str], str, str]:
        listed = [t.name for t in await server.list_tools()]
        hit = await server.call_tool("get_order", {"order_id": order})
        miss = await server.call_tool("get_order", {"order_id": "no-such-id"})
        return listed, hit.content[0].text, miss.content[0].text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # inside the MCP server stack
        listed, hit, miss = asyncio.run(calls())
    assert listed == ["get_order", "refund_order"]
    assert json.loads(hit)["data"] == task.data.info["world_state"]["records"][order]
    assert json.loads(miss)["status"] == "not_found"


def echo_execute(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A module-level execute: answers every call itself instead of the mock world."""
    return {"status": "ok", "echo": tool, "arguments": arguments}


def test_load_environment_with_execute_and_reward_overrides(graded: Any, tmp_path: Path) -> None:
    pytest.importorskip("verifiers.v1")
    folder = tmp_path / "exec-env"
    zps.export_environment(graded, folder, holdout=0.3, tools=TOOLS)
    taskset = zps.load_environment(folder, split="train", execute=echo_execute,
                                   reward=no_planted_mistake)
    task = next(iter(taskset))
    toolset = type(task).toolsets(task.config)[0]
    answer = json.loads(toolset.call("get_order", {"order_id": "1"}))
    assert answer == {"status": "ok", "echo": "get_order", "arguments": {"order_id": "1"}}
    assert toolset.spec["reward"] == f"{__name__}:no_planted_mistake"
    with pytest.raises(SpecError, match=r"no spec\.json"):
        zps.load_environment(tmp_path / "missing")
    with pytest.raises(TypeError, match="valid keywords"):
        zps.load_environment(folder, splits="train")
