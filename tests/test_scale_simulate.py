"""simulate sharded across Ray workers: each clause of the promise, on the local cluster.

- shards split by the task's identity (``hash64`` of its key), the same in every process and
  whatever order the tasks come in;
- the union of the shards' rows equals one process's rows with the same seed, also when tasks
  have different numbers of rows (every shard plays the run's k);
- model-backed agents and writers keep each endpoint's limit across the cluster, per request,
  and are built as one process builds them (``logprobs=`` kept);
- ``output=`` is written per shard and merged.

The session's local cluster (the ``ray`` fixture: 2 CPUs, files under tmp); model endpoints are
chat servers on 127.0.0.1. Skipped under ``WHILEAI_PURE=1`` and without the ray extra.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from chat_server import Answer, completion, serve

# Ray leaves its own log files and helper-process handles to the garbage collector: not ours.
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

KW: dict[str, Any] = {"tools": TOOLS, "system_prompt": "Help.", "simulator": False}


def _canon(rows: Any) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def _keys(rows: Any) -> list[tuple[str, int]]:
    return [(r["scenario_id"], r["rollout_index"]) for r in rows]


def test_shards_follow_the_tasks_identity_in_every_process(ray: Any) -> None:
    from whileai.scale import shard_of, simulate_sharded

    keys = [f"sc-{i:04d}" for i in range(40)]
    remote = ray.get(ray.remote(lambda ks: [shard_of(k, 3) for k in ks]).remote(keys))
    assert remote == [shard_of(k, 3) for k in keys]  # a worker's hash is the driver's
    rows = [{"scenario_id": f"s{i}", "prompt": f"ask {i}", "rollout_index": r}
            for i in range(9) for r in range(2)]
    agent = zps.seeded_agent(TOOLS)
    want = {i: 2 * sum(shard_of(f"s{t}", 3) == i for t in range(9)) for i in range(3)}
    for order in (rows, rows[::-1]):  # the tasks' order does not move them between shards
        data = simulate_sharded(agent, tasks=order, shards=3, progress=False, **KW)
        shards = data.search["shards"]
        assert [s["rows"] for s in shards] == [want[i] for i in range(3) if want[i]]
        per_shard = [sorted({r["scenario_id"] for r in s_rows})
                     for s_rows in _rows_by_shard(data.trajectories, 3)]
        assert per_shard == [sorted(f"s{t}" for t in range(9) if shard_of(f"s{t}", 3) == i)
                             for i in range(3)]


def _rows_by_shard(rows: list[dict[str, Any]], shards: int) -> list[list[dict[str, Any]]]:
    from whileai.scale import shard_of

    out: list[list[dict[str, Any]]] = [[] for _ in range(shards)]
    for row in rows:
        out[shard_of(row["scenario_id"], shards)].append(row)
    return out


def test_union_equals_one_process_with_the_same_seed_and_uneven_tasks(ray: Any) -> None:
    """One task has three rows, the rest one: one process plays k = 3 for every task, and so
    must a shard that holds only one-row tasks."""
    from whileai.scale import shard_of, simulate_sharded

    rows = [{"scenario_id": f"s{i}", "prompt": f"where is order {4400 + i}?", "rollout_index": 0}
            for i in range(8)]
    rows += [{**rows[0], "rollout_index": r} for r in (1, 2)]
    assert len({shard_of(f"s{i}", 2) for i in range(1, 8)} - {shard_of("s0", 2)}) == 1
    agent = zps.seeded_agent(TOOLS)
    runs = {}
    for seed in (11, 12):
        one = zps.simulate(agent, tasks=rows, progress=False, advanced={"seed": seed}, **KW)
        assert len(one) == 24
        got = simulate_sharded(agent, tasks=rows, shards=2, progress=False,
                               advanced={"seed": seed}, **KW)
        assert _canon(got.trajectories) == _canon(one.trajectories)
        assert _keys(got.trajectories) == _keys(one.trajectories)
        runs[seed] = _canon(one.trajectories)
    assert runs[11] != runs[12]  # the seed reaches the rows: equal above is not by accident


class Endpoint:
    """A chat server role that counts the requests in flight (each held ``hold`` seconds)."""

    def __init__(self, hold: float = 0.03) -> None:
        self.hold = hold
        self.lock = threading.Lock()
        self.now = self.peak = self.calls = self.writer_calls = 0

    def __call__(self, path: str, body: dict[str, Any], i: int) -> Answer:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.hold)
            return self.answer(body)
        finally:
            with self.lock:
                self.now -= 1

    def answer(self, body: dict[str, Any]) -> Answer:
        messages = body["messages"]
        if "never the assistant" in messages[0]["content"]:  # the writer: the person is done
            with self.lock:
                self.writer_calls += 1
            return Answer(completion('{"done": true}', model="writer"))
        if messages[-1]["role"] == "user":
            return Answer(completion(None, tool_calls=[("get_order", {"order_id": "4412"})],
                                     model="policy-m", logprobs=[-0.5, -0.5]))
        return Answer(completion("Order 4412 shipped.", model="policy-m", logprobs=[-1.0]))


def _model_rows(rows: Any) -> list[tuple[Any, ...]]:
    """What a model run's rows say (timings and ids aside)."""
    return sorted((r["scenario_id"], r["rollout_index"], r["final_text"], r["logprob"],
                   r["n_tokens"], [s["tool"] for s in r["steps"]]) for r in rows)


@pytest.mark.parametrize("one_server", [False, True])
def test_model_agent_and_writer_keep_each_endpoints_limit(
        ray: Any, monkeypatch: pytest.MonkeyPatch, one_server: bool) -> None:
    from whileai.scale import endpoint_slots, simulate_sharded
    from whileai.simulations.models.spec import parse_spec

    for var in ("WHILEAI_AGENT", "WHILEAI_SIMULATOR", "WHILEAI_JUDGE"):
        monkeypatch.delenv(var, raising=False)
    tasks = [{"scenario_id": f"s{i}", "prompt": f"where is order {i}?", "rollout_index": r}
             for i in range(6) for r in range(2)]
    agent_side = both = Endpoint()
    writer_side = agent_side if one_server else Endpoint()  # one server: one shared limit
    with serve(agent_side) as agent_server, serve(writer_side) as writer_server:
        kw: dict[str, Any] = {"tools": TOOLS, "system_prompt": "Help.", "logprobs": True,
                              "advanced": {"concurrency": 4}, "simulator":
                              f"vllm:writer@{(agent_server if one_server else writer_server).url}"}
        agent = f"vllm:policy-m@{agent_server.url}"
        one = zps.simulate(agent, tasks=tasks, progress=False, **kw)
        for side in (agent_side, writer_side):
            side.peak = side.calls = 0
        slots = endpoint_slots(parse_spec(agent).base_url, 2)  # held here: the run finds it
        got = simulate_sharded(agent, tasks=tasks, shards=2, endpoint_limit=2, progress=False,
                               **kw)
        stats = ray.get(slots.stats.remote())
    assert _model_rows(got.trajectories) == _model_rows(one.trajectories)
    assert all(r["logprob"] == -2.0 for r in got.trajectories)  # built as one process builds it
    assert len(got.search["shards"]) == 2
    sides = [both] if one_server else [agent_side, writer_side]
    assert all(side.calls > 0 for side in sides)
    assert writer_side.writer_calls > 0  # the writer speaks too (each follow-up)
    assert all(side.peak <= 2 for side in sides)
    assert stats["limit"] == 2
    assert stats["out"] == 0
    assert stats["peak"] == 2  # the limit had work to do: both shards' requests met at it


def test_output_is_written_per_shard_then_merged(ray: Any, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import whileai.scale.simulate as scale_simulate
    from whileai.scale import simulate_sharded

    written: dict[str, list[str]] = {}
    real = scale_simulate._merge_files

    def recording(output: Path, paths: list[str]) -> None:
        for path in paths:  # each shard's own file, as the shard left it
            written[Path(path).name] = Path(path).read_text(encoding="utf-8").splitlines()
        real(output, paths)

    monkeypatch.setattr(scale_simulate, "_merge_files", recording)
    agent = zps.seeded_agent(TOOLS)
    plan = zps.simulate(agent, budget=12, repeats=2, progress=False, **KW)
    out = tmp_path / "run.jsonl"
    got = simulate_sharded(agent, tasks=plan, shards=2, output=out, progress=False, **KW)
    assert sorted(written) == ["run.shard-0-of-2.jsonl", "run.shard-1-of-2.jsonl"]
    by_shard = _rows_by_shard(got.trajectories, 2)
    for i in range(2):
        lines = written[f"run.shard-{i}-of-2.jsonl"]
        assert sorted(_keys(json.loads(x) for x in lines)) == sorted(_keys(by_shard[i]))
    merged = out.read_text(encoding="utf-8").splitlines()
    assert merged == written["run.shard-0-of-2.jsonl"] + written["run.shard-1-of-2.jsonl"]
    assert not list(tmp_path.glob("run.shard-*"))
    assert sorted(_keys(zps.load_rows(out))) == sorted(_keys(got.trajectories))
    one = zps.simulate(agent, tasks=plan, output=tmp_path / "one.jsonl", progress=False, **KW)
    assert sorted(merged) == sorted((tmp_path / "one.jsonl").read_text("utf-8").splitlines())
    assert len(one) == len(merged) == 12


def test_a_gzip_output_stays_gzip(ray: Any, tmp_path: Path) -> None:
    """``output="run.jsonl.gz"``: one process writes gzip, so the merged file is gzip too."""
    from whileai.scale import simulate_sharded

    agent = zps.seeded_agent(TOOLS)
    plan = zps.simulate(agent, budget=8, repeats=2, progress=False, **KW)
    one = zps.simulate(agent, tasks=plan, output=tmp_path / "one.jsonl.gz", progress=False, **KW)
    out = tmp_path / "many.jsonl.gz"
    simulate_sharded(agent, tasks=plan, shards=2, output=out, progress=False, **KW)
    assert out.read_bytes()[:2] == (tmp_path / "one.jsonl.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert sorted(_keys(zps.load_rows(out))) == sorted(_keys(one.trajectories))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.jsonl.gz", "one.jsonl.gz"]
