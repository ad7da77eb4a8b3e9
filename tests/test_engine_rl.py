"""mode="rl": successive allocation; reproducible runs; the allocator's rule."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from typing import Any

import whileai.simulations as zps
from _tools import TOOLS
from whileai.simulations.play.allocation import Allocator

POLICY = "Help customers with orders."
QUIET = {"simulator": False, "progress": False}


def groups(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        out[row["scenario_id"]].append(row)
    return out


def mixed(group: list[dict[str, Any]]) -> bool:
    return len({r["scenario_dimensions"]["behavior_signature"] for r in group}) > 1


def test_rl_fills_mixed_groups_and_stops_unanimous_ones() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.3), tools=TOOLS, system_prompt=POLICY,
                        mode="rl", repeats=6, budget=120, advanced={"concurrency": 1}, **QUIET)
    by_task = groups(data.trajectories)
    report = data.search["groups"]
    assert data.rollouts_per_request == 6
    *settled, _last = by_task.values()  # the budget may cut the last group short
    for rows in settled:
        indices = sorted(r["rollout_index"] for r in rows)
        assert indices == list(range(len(rows)))
        assert len(rows) >= 2  # the probe
        if mixed(rows[:2]):
            assert len(rows) == 6
    stopped = [rows for rows in by_task.values() if len(rows) < 6 and not mixed(rows)]
    assert report["stopped"] >= len(stopped) - 1
    assert report["rollouts_saved"] > 0
    assert report["mixed"] == sum(1 for rows in by_task.values() if mixed(rows))
    arms = {r["scenario_dimensions"]["arm"] for r in data.trajectories}
    assert {"explore", "probe"} <= arms


def test_rl_with_a_grader_reads_rewards() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.3), tools=TOOLS, system_prompt=POLICY,
                        mode="rl", repeats=4, budget=60, advanced={"concurrency": 1},
                        grader=lambda row: {"reward": int(not row["seeded"])}, **QUIET)
    for rows in groups(data.trajectories).values():
        rewards = {r["reward"] for r in rows[:2]}
        if len(rewards) > 1 and rows is not list(groups(data.trajectories).values())[-1]:
            assert len(rows) == 4


def test_rl_resumes_unanimous_groups_when_nothing_fresh_is_left() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.0), tools=TOOLS, system_prompt=POLICY,
                        mode="rl", repeats=5, situations=4, budget=100,
                        advanced={"concurrency": 1}, **QUIET)
    by_task = groups(data.trajectories)
    assert len(by_task) == 4
    assert all(len(rows) == 5 for rows in by_task.values())
    assert "resume" in {r["scenario_dimensions"]["arm"] for r in data.trajectories}
    assert data.stopped_because == "situations_exhausted"


def test_fixed_repeat_policy_gives_k_to_everyone() -> None:
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.0), tools=TOOLS, system_prompt=POLICY,
                        mode="rl", repeats=3, repeat_policy="fixed", budget=30, **QUIET)
    assert all(len(rows) == 3 for rows in groups(data.trajectories).values())
    assert data.search["groups"]["rollouts_saved"] == 0


def test_allocator_rule_hazard_against_fresh_rate() -> None:
    alloc = Allocator(repeats=8, probe=2, adaptive=True)
    assert alloc.hazard(2) == 1 / 4  # the 1/(n+2) prior
    assert alloc.fresh_rate() == 0.5 / 2
    group = alloc.open("S", arm="explore", reason="r")
    jobs = [alloc.next_job(), alloc.next_job()]
    assert [j.arm for j in jobs if j] == ["explore", "probe"]
    assert alloc.next_job() is None  # waiting for the probe
    for job in jobs:
        assert job is not None
        alloc.land(job, "same", {})
    # one unanimous probe: fresh asks now yield (0+1)/(1+2) mixed groups per 2 rollouts = 1/6,
    # and the hazard after 2 is still its prior 1/4 > 1/6: extend by one rollout
    assert alloc.fresh_rate() == (1 / 3) / 2
    job = alloc.next_job()
    assert job is not None
    assert job.arm == "extend"
    alloc.land(job, "same", {})
    assert alloc.trials == {2: 1}
    assert alloc.hazard(3) == 1 / 5  # prior 1/(3+2), nothing measured at 3 yet
    job = alloc.next_job()
    assert job is not None
    alloc.land(job, "same", {})
    assert alloc.hazard(4) == 1 / 6  # does not beat the fresh rate: stop
    assert alloc.next_job() is None
    assert group.state == "stopped"
    assert group.landed == 4
    assert alloc.report()["rollouts_saved"] == 4
    assert alloc.resume_stopped()
    job = alloc.next_job()
    assert job is not None
    assert job.arm == "resume"


def test_a_split_fills_the_group_to_k() -> None:
    alloc = Allocator(repeats=5, probe=2, adaptive=True)
    group = alloc.open("S", arm="explore", reason="r")
    for signature in ("a", "b"):
        job = alloc.next_job()
        assert job is not None
        alloc.land(job, signature, {})
    fills = [alloc.next_job() for _ in range(3)]
    assert [j.arm for j in fills if j] == ["fill"] * 3
    assert alloc.next_job() is None
    assert group.issued == 5


def test_reproducible_runs_are_bit_identical_across_processes() -> None:
    code = (
        "import json, whileai.simulations as zps\n"
        f"T = {TOOLS!r}\n"
        "d = zps.simulate(zps.seeded_agent(T, seed=4), tools=T, system_prompt='Help.',"
        " simulator=False, progress=False, mode='rl', repeats=4, budget=40,"
        " reproducible=True, advanced={'seed': 7, 'concurrency': 8})\n"
        "print(json.dumps(d.trajectories, sort_keys=True))"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": str(i), "WHILEAI_PURE": "1"}
                           ).stdout for i in (1, 2)]
    assert runs[0] == runs[1]
    here = zps.simulate(zps.seeded_agent(TOOLS, seed=4), tools=TOOLS, system_prompt="Help.",
                        mode="rl", repeats=4, budget=40, reproducible=True,
                        advanced={"seed": 7, "concurrency": 8}, **QUIET)
    assert json.dumps(here.trajectories, sort_keys=True) == runs[0].strip()
    other = zps.simulate(zps.seeded_agent(TOOLS, seed=4), tools=TOOLS, system_prompt="Help.",
                         mode="rl", repeats=4, budget=40, reproducible=True,
                         advanced={"seed": 8, "concurrency": 8}, **QUIET)
    assert json.dumps(other.trajectories, sort_keys=True) != runs[0].strip()


def test_groups_short_of_k_at_the_clock_are_stamped_group_cut() -> None:
    import time

    def slow(message: str) -> dict[str, Any]:
        time.sleep(0.01)
        return {"steps": [], "final_text": "same"}

    data = zps.simulate(slow, tools=TOOLS, system_prompt=POLICY, mode="rl", repeats=8,
                        repeat_policy="fixed", budget=100000, time_budget=0.25,
                        advanced={"concurrency": 4, "stop_grace": 2}, **QUIET)
    assert data.stopped_because == "time_budget"
    cut = {r["scenario_id"] for r in data.trajectories if r.get("group_cut")}
    by_task = groups(data.trajectories)
    assert all(len(by_task[s]) < 8 for s in cut)
    assert data.search["groups"]["cut"] == len(cut)
    assert all(len(rows) == 8 for s, rows in by_task.items() if s not in cut)
