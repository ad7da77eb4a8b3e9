"""whileai.scale on a local Ray cluster: each adapter returns what the single-process call does.

One session-wide cluster (the ``ray`` fixture: 2 CPUs, files under tmp, loopback only);
skipped under ``WHILEAI_PURE=1`` and without the ray extra.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from whileai.errors import ConfigError

# Ray leaves its own log files and helper-process handles to the garbage collector: not ours.
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

WORDS = ("please", "thanks", "order", "status", "refund", "item", "box", "shipped", "soon")


def _canon(rows: Any) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def _train_rows(n: int) -> list[dict[str, Any]]:
    rng = random.Random(5)
    rows: list[dict[str, Any]] = []
    for i in range(n):
        if i % 9 == 0:
            prompt = f"Where is my order number {i % 40} that I placed last week, please help"
        elif i % 13 == 0:
            prompt = "tiny"
        else:
            prompt = " ".join(rng.choice(WORDS) for _ in range(12)) + f" {i}"
        rows.append({"scenario_id": f"s{i % 300}" if i % 50 else "eval-7", "prompt": prompt,
                     "final_text": "ok" if i % 17 else ""})
    return rows


EVALS = [{"prompt": f"where is my order number {i} that I placed last week please help",
          "scenario_id": "eval-7" if i == 0 else f"e{i}", "final_text": "Your order shipped."}
         for i in range(40)]


def test_decontaminate_dataset_equals_one_process(ray: Any) -> None:
    from whileai.scale import decontaminate_dataset

    rows = _train_rows(1200)
    clean, want = zps.decontaminate(rows, EVALS, fields=("prompt", "final_text"))
    ds = ray.data.from_items(rows, override_num_blocks=5)
    kept, got = decontaminate_dataset(ds, EVALS, fields=("prompt", "final_text"), batch_size=97)
    assert want["dropped"] > 0
    assert want["by_rule"]["same_task"] > 0
    assert want["short_texts"] > 0
    assert want["missing"]["final_text"] > 0
    assert [e["index"] for e in got["examples"]] == [e["index"] for e in want["examples"]]
    assert got == want
    assert _canon(kept.take_all()) == _canon(clean)


def test_decontaminate_dataset_json_text_and_output(ray: Any, tmp_path: Path) -> None:
    from whileai.scale import decontaminate_dataset

    rows = _train_rows(300)
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    index = zps.build_eval_index(EVALS)
    clean, want = zps.decontaminate(rows, index)
    kept, got = decontaminate_dataset(ray.data.read_text(str(path)), index, column="text",
                                      output=tmp_path / "kept")
    assert got == {**want, "output": str(tmp_path / "kept")}
    assert _canon(json.loads(r["text"]) for r in kept.take_all()) == _canon(clean)
    assert list((tmp_path / "kept").glob("*.parquet"))  # written, then read back lazily


def _write_jsonl(path: Path, rows: list[dict[str, Any]], *, blank_every: int = 0) -> None:
    lines = []
    for i, row in enumerate(rows):
        lines.append(json.dumps(row) + ("\r\n" if i % 7 == 3 else "\n"))  # some CRLF lines
        if blank_every and i % blank_every == 0:
            lines.append("\n")  # blank lines are no rows: they must not shift the numbering
    path.write_text("\ufeff" + "".join(lines), encoding="utf-8")  # and a byte-order mark


def test_decontaminate_paths_in_many_spans_finishing_out_of_order(
        ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spans of a few lines, submitted in reverse and in random order: the file's numbering.

    The adapter once merged batch reports in the order Ray handed the blocks back, and read_text
    hands a large file back rotated: the example row numbers went wrong. The span tasks here
    finish in another order than the file's (submitted last-first, then shuffled), so a merge
    that followed completion order would fail.
    """
    import whileai.scale.decontam as scale_decontam
    from whileai.scale import decontaminate_dataset

    rows = _train_rows(900)
    first = tmp_path / "a.jsonl"
    second = tmp_path / "b.jsonl"
    _write_jsonl(first, rows[:500], blank_every=37)
    _write_jsonl(second, rows[500:])
    clean, want = zps.decontaminate(rows, EVALS, fields=("prompt", "final_text"))
    assert len(want["examples"]) == 5
    assert want["dropped"] > 5
    real = scale_decontam.spans
    for shuffle in (lambda cut: cut[::-1], lambda cut: random.Random(3).sample(cut, len(cut))):
        monkeypatch.setattr(scale_decontam, "spans",
                            lambda paths, size, how=shuffle: how(real(paths, size)))
        kept, got = decontaminate_dataset([first, second], EVALS, fields=("prompt", "final_text"),
                                          batch_size=13, span_bytes=997, progress=False)
        assert len(real([first, second], 997)) > 40  # many spans, most holding a few lines
        assert [e["index"] for e in got["examples"]] == [e["index"] for e in want["examples"]]
        assert got == want
        assert _canon(json.loads(r["text"]) for r in kept.take_all()) == _canon(clean)
    # one file against the single-process call over that same file (the reader's own rules)
    _, one = zps.decontaminate(str(first), EVALS, progress=False)
    assert decontaminate_dataset(first, EVALS, span_bytes=500, progress=False)[1] == one


def test_decontaminate_paths_gzip_output_and_bad_line(ray: Any, tmp_path: Path) -> None:
    import gzip

    from whileai.errors import RowError
    from whileai.scale import decontaminate_dataset

    rows = _train_rows(400)
    path = tmp_path / "train.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    clean, want = zps.decontaminate(rows, EVALS)
    kept, got = decontaminate_dataset(str(path), EVALS, output=tmp_path / "kept", batch_size=50,
                                      progress=False)
    assert got == {**want, "output": str(tmp_path / "kept")}
    assert _canon(json.loads(r["text"]) for r in kept.take_all()) == _canon(clean)
    bad = tmp_path / "bad.jsonl"
    lines = [json.dumps(r) for r in rows[:60]]
    lines[47] = '{"prompt": "cut short'
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RowError, match=r"bad\.jsonl:48: not valid JSON"):
        decontaminate_dataset(bad, EVALS, span_bytes=300, progress=False)
    lines[47] = "\ufeff" + json.dumps(rows[47])  # a byte-order mark is for line 1 only
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RowError, match=r"bad\.jsonl:48: not valid JSON"):
        zps.decontaminate(str(bad), EVALS, progress=False)
    for size in (300, len("\n".join(lines[:47])) + 1):  # the line inside a span, or opening one
        with pytest.raises(RowError, match=r"bad\.jsonl:48: not valid JSON"):
            decontaminate_dataset(bad, EVALS, span_bytes=size, progress=False)


def test_decontaminate_dataset_of_many_blocks_leaves_the_callers_context(ray: Any) -> None:
    """Many small blocks and batches; the caller's dataset keeps its own execution options."""
    from whileai.scale import decontaminate_dataset

    rows = _train_rows(700)
    _, want = zps.decontaminate(rows, EVALS, fields=("prompt", "final_text"))
    ds = ray.data.from_items(rows, override_num_blocks=23)
    options = ds.context.execution_options
    assert options.preserve_order is False
    _, got = decontaminate_dataset(ds, EVALS, fields=("prompt", "final_text"), batch_size=11,
                                   progress=False)
    assert got == want
    assert ds.context.execution_options.preserve_order is False  # put back after the pass


def test_decontaminate_dataset_refuses_a_list(ray: Any) -> None:
    from whileai.scale import decontaminate_dataset

    with pytest.raises(ConfigError, match=r"JSONL paths or a ray\.data\.Dataset"):
        decontaminate_dataset([{"prompt": "x"}], EVALS)
    with pytest.raises(ConfigError, match="span_bytes"):
        decontaminate_dataset(["x.jsonl"], EVALS, span_bytes=0)
    with pytest.raises(ConfigError, match="column='text' is for a Dataset"):
        decontaminate_dataset("x.jsonl", EVALS, column="text")
    with pytest.raises(ConfigError, match="overlap"):
        decontaminate_dataset(ray.data.from_items([{"prompt": "x"}]), EVALS, overlap=2.0)


def _graded_rows() -> list[dict[str, Any]]:
    rng = random.Random(11)
    rows = []
    for ask in range(24):
        for r in range(6):
            paid = rng.random() < 0.5
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8)))
            rows.append({
                "scenario_id": f"sc-{ask:04d}", "rollout_index": r, "prompt": f"ask {ask}",
                "steps": [{"tool": "lookup_order", "arguments": {"id": str(ask)}, "result": {}}]
                if rng.random() < 0.6 else [],
                "final_text": text + (" ### done" if paid else ""),
                "reward": 1.0 if paid else 0.0,
            })
    rows.append({"scenario_id": "sc-x", "final_text": "no reward"})  # skipped, counted
    return rows


def test_hack_scan_dataset_equals_one_process(ray: Any, tmp_path: Path) -> None:
    from whileai.scale import hack_scan_dataset

    rows = _graded_rows()
    want = zps.hack_scan(rows, endorsed=["tool:lookup_order"], n_perm=30, seed=3)
    assert want["regime"] == "reward_hack"
    assert want["support"]["skipped"]["unjudged"] == 1
    path = tmp_path / "graded.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ds = ray.data.read_text(str(path), override_num_blocks=3)
    got = hack_scan_dataset(ds, ["tool:lookup_order"], column="text", n_perm=30, seed=3,
                            batch_size=50)
    assert got == want
    with pytest.raises(TypeError, match="n_perms"):
        hack_scan_dataset(ds, n_perms=3)


def test_simulate_sharded_equals_one_process(ray: Any, tmp_path: Path) -> None:
    from whileai.scale import shard_of, simulate_sharded

    agent = zps.seeded_agent(TOOLS)
    kw: dict[str, Any] = {"tools": TOOLS, "system_prompt": "Help.", "simulator": False}
    plan = zps.simulate(agent, budget=18, repeats=3, progress=False, **kw)
    one = zps.simulate(agent, tasks=plan, output=tmp_path / "one.jsonl", progress=False, **kw)
    keys = {r["scenario_id"] for r in plan.trajectories}
    assert {shard_of(k, 3) for k in keys} == {0, 1, 2}  # every shard gets work
    got = simulate_sharded(agent, tasks=plan, shards=3, output=tmp_path / "many.jsonl", **kw)
    assert len(got) == len(one) == 18
    assert _canon(got.trajectories) == _canon(one.trajectories)
    assert [(r["scenario_id"], r["rollout_index"]) for r in got.trajectories] == \
        [(r["scenario_id"], r["rollout_index"]) for r in one.trajectories]
    merged = (tmp_path / "many.jsonl").read_text(encoding="utf-8").splitlines()
    single = (tmp_path / "one.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(merged) == sorted(single)
    assert not list(tmp_path.glob("many.shard-*"))  # merged, then removed
    assert got.search["rows"] == 18
    assert len(got.search["shards"]) == 3


def test_simulate_sharded_refuses_what_does_not_split(ray: Any) -> None:
    from whileai.scale import simulate_sharded

    rows = [{"scenario_id": f"s{i}", "prompt": "hi", "rollout_index": 0} for i in range(4)]
    with pytest.raises(ConfigError, match="time_budget"):
        simulate_sharded(len, tasks=rows, time_budget=5.0)
    with pytest.raises(ConfigError, match="repeat_policy"):
        simulate_sharded(len, tasks=rows, mode="rl")
    with pytest.raises(ConfigError, match="budget"):
        simulate_sharded(len, tasks=rows, budget=3)


def test_endpoint_limit_holds_across_the_cluster(ray: Any) -> None:
    from whileai.scale import endpoint_slots, simulate_sharded

    def slow_agent(message: str) -> dict[str, Any]:  # local: Ray ships it by value
        time.sleep(0.05)  # a moment, so the shards overlap and the limit has work to do
        return {"steps": [], "final_text": "ok"}

    rows = [{"scenario_id": f"s{i}", "prompt": f"ask {i}", "rollout_index": r}
            for i in range(8) for r in range(2)]
    slots = endpoint_slots("test-endpoint", 1)  # held here: the run finds it by name
    data = simulate_sharded(slow_agent, tasks=rows, shards=2, endpoint_limit=1,
                            endpoint="test-endpoint", tools=TOOLS, system_prompt="Help.",
                            simulator=False, advanced={"concurrency": 4})
    assert len(data) == 16
    stats = ray.get(slots.stats.remote())
    assert stats == {"limit": 1, "out": 0, "peak": 1}


def test_adapters_count_their_work_on_a_progress_line(ray: Any, monkeypatch: Any) -> None:
    import io

    import whileai.scale.decontam as scale_decontam
    import whileai.scale.simulate as scale_simulate
    from whileai.rows.progress import Progress
    from whileai.scale import decontaminate_dataset, simulate_sharded
    lines: list[Progress] = []

    def recording(*args: Any, **kwargs: Any) -> Progress:
        lines.append(Progress(*args, **{**kwargs, "stream": io.StringIO()}))
        return lines[-1]

    monkeypatch.setattr(scale_simulate, "Progress", recording)
    monkeypatch.setattr(scale_decontam, "Progress", recording)
    agent = zps.seeded_agent(TOOLS)
    kw: dict[str, Any] = {"tools": TOOLS, "system_prompt": "Help.", "simulator": False}
    plan = zps.simulate(agent, budget=12, repeats=2, progress=False, **kw)
    simulate_sharded(agent, tasks=plan, shards=3, **kw)
    rows = _train_rows(300)
    _, want = zps.decontaminate(rows, EVALS, progress=False)
    decontaminate_dataset(ray.data.from_items(rows, override_num_blocks=3), EVALS)
    shards, checked = lines
    assert (shards.label, shards.done, shards.target, shards.enabled) == \
        ("simulate shards", 3, 3, True)
    assert (checked.done, checked.counts["dropped"]) == (300, want["dropped"])
