"""The scheduler behind ``simulate``: threads, the clock, the output file, progress.

Everything it decides comes from the situation source and the allocator; this module only runs
rollouts, lands them in a fixed order, and keeps the books. ``reproducible=True`` (or
``concurrency: 1``) lands rollouts wave by wave in job order, so rows are bit-identical across
processes for the same seed.

When every party to a rollout (agent, world, grader) says it is ``cpu_bound`` (it computes in
this process and never waits on I/O, like the seeded agent in the mock world), worker threads
could only fight over the GIL, so rollouts run on the calling thread unless
``advanced["concurrency"]`` was given.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import queue
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai import _backend
from whileai.errors import AuthError, QuotaError, RowError
from whileai.rows.progress import Progress
from whileai.secrets import mask_secrets
from whileai.simulations.agent.spec import AgentSpec
from whileai.simulations.generate.agents import RolloutAgent, ToolWorld, checked_output
from whileai.simulations.generate.grid import AXES, Grid
from whileai.simulations.generate.situation import Situation, Writer
from whileai.simulations.judge.judging import judge_row
from whileai.simulations.models.embedders import HASH_VERSION
from whileai.simulations.play.allocation import Allocator, Job
from whileai.simulations.play.config import RunConfig
from whileai.simulations.play.fingerprint import FIELD as FINGERPRINT
from whileai.simulations.play.fingerprint import run_fingerprint
from whileai.simulations.play.output import RunOutput
from whileai.simulations.play.record import build_row
from whileai.simulations.play.source import SituationSource
from whileai.simulations.play.stop import StopReason, quota_stop
from whileai.simulations.world.rollout import RolloutContext, using_rollout

__all__ = ["RunInputs", "RunResult", "rollout_threads", "run"]

_CLOSING_SHARE = 0.9  # past this share of time_budget, open no new groups


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInputs:
    """Everything one run needs, resolved."""

    spec: AgentSpec
    grid: Grid
    writer: Writer
    agent: RolloutAgent
    world: ToolWorld
    cfg: RunConfig
    grader: Callable[[Any], Any] | None = None
    output: str | Path | None = None
    overwrite: bool = False  # start output= anew instead of resuming (or refusing) it
    tasks: tuple[Situation, ...] | None = None
    task_repeats: int | None = None
    warnings: tuple[str, ...] = ()
    reject: Callable[[str], object] | None = None
    finish: Callable[[dict[str, Any]], None] | None = None  # after the grader (llm_grade)


@dataclass(slots=True, kw_only=True)
class RunResult:
    """What the run produced: rows with privileged, its report, and why it stopped."""

    trajectories: list[dict[str, Any]]
    search: dict[str, Any]
    stopped_because: StopReason
    repeats: int
    extra: dict[str, Any] = field(default_factory=dict)


def _rollout_seed(cfg: RunConfig, situation: Situation, index: int) -> int:
    return (cfg.seed + _backend.hash64(f"{situation.scenario_id}|r{index}")) & 0x7FFFFFFF


def rollout_threads(inputs: RunInputs) -> int:
    """Threads to play rollouts on: 1 when every party is ``cpu_bound`` and none were asked for."""
    cfg = inputs.cfg
    parties = (inputs.agent, inputs.world, inputs.grader)
    in_process = all(getattr(p, "cpu_bound", False) is True for p in parties if p is not None)
    return 1 if in_process and not cfg.concurrency_given else cfg.concurrency


def _play(inputs: RunInputs, job: Job) -> tuple[dict[str, Any] | None, str | None]:
    """Run one rollout (on a worker thread, or inline); return its row, or the agent's error."""
    cfg = inputs.cfg
    situation: Situation = job.group.situation
    ctx = RolloutContext(
        scenario_id=situation.scenario_id,
        prompt=situation.prompt,
        rollout_index=job.rollout_index,
        seed=cfg.seed,
        world_state=situation.world_state,
        faults=situation.faults,
        situation=situation,
    )
    with using_rollout(ctx):
        try:
            raw = inputs.agent.run(situation, world=inputs.world,
                                   seed=_rollout_seed(cfg, situation, job.rollout_index))
            output = checked_output(raw)
        except (QuotaError, AuthError):
            raise  # a spent quota or a refused key ends the whole run (see ``run``)
        except Exception as exc:  # the agent's own failure: the rollout is dropped and counted
            return None, f"{type(exc).__name__}: {exc}"
    try:
        row = build_row(situation, output, fired=ctx.fired, rollout_index=job.rollout_index,
                        arm=job.arm, reason=job.group.reason,
                        system_prompt=inputs.spec.policy, seed=cfg.seed)
    except Exception as exc:  # odd content in the agent's steps: dropped and counted
        return None, f"row could not be built from the agent output: {type(exc).__name__}: {exc}"
    if inputs.grader is not None:

        row = judge_row(row, inputs.grader, source="simulate")
    if inputs.finish is not None:
        inputs.finish(row)
    return row, None


def _stop_models(inputs: RunInputs) -> None:
    """Tell a model agent / writer to stop waiting on retries: the run is over."""
    for owner in (inputs.agent, inputs.writer):
        stop = getattr(owner, "stop", None)
        if callable(stop):
            with contextlib.suppress(Exception):
                stop()


def _signature(row: Mapping[str, Any], graded: bool) -> object:
    if graded:
        return row.get("reward")
    return row["scenario_dimensions"]["behavior_signature"]


_Rollout = cf.Future[tuple[dict[str, Any] | None, str | None]]  # a rollout played on a thread


class _Scheduler:
    """One run's moving parts and books: the loop that opens jobs, plays them and lands rows."""

    def __init__(self, inputs: RunInputs, repeats: int) -> None:
        cfg = self.cfg = inputs.cfg
        self.inputs = inputs
        self.source = SituationSource(inputs.spec, inputs.grid, inputs.writer, cfg,
                                      tasks=inputs.tasks, reject=inputs.reject)
        self.alloc = Allocator(repeats=repeats, probe=cfg.probe,
                               adaptive=cfg.repeat_policy == "adaptive")
        self.threads = rollout_threads(inputs)
        self.reproducible = cfg.reproducible or self.threads == 1
        self.trajectories: list[dict[str, Any]] = []
        self.progress = Progress("simulate", cfg.budget, enabled=cfg.progress)
        self.fingerprint = run_fingerprint(inputs, repeats=repeats)  # stamped on every row
        # opened first: a file of another run is refused before anything is played
        self.output = (RunOutput(inputs.output, fingerprint=self.fingerprint,
                                 overwrite=inputs.overwrite)
                       if inputs.output is not None else None)
        self.pool = cf.ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        self.inflight: dict[_Rollout, tuple[int, Job]] = {}  # future -> (submitted as, job)
        # each rollout puts itself here when it ends: waiting costs the same at any concurrency
        # (cf.wait hooks into and out of every future in flight at each wake)
        self.finished: queue.SimpleQueue[_Rollout] = queue.SimpleQueue()
        self.lost = self.committed = self.seq = self.abandoned = 0
        self.first_error: str | None = None
        self.stop: StopReason | None = None
        self.start = time.monotonic()
        if cfg.time_budget:  # a writer wave still running after the clock and stop_grace is dropped
            self.source.deadline = self.start + cfg.time_budget + cfg.stop_grace

    def time_up(self) -> bool:
        budget = self.cfg.time_budget
        return bool(budget) and time.monotonic() - self.start >= (budget or 0.0)

    def next_job(self, open_new: bool) -> Job | None:
        alloc = self.alloc
        job = alloc.next_job()
        while job is None and open_new:
            drawn = self.source.next()
            if drawn is None:
                if alloc.adaptive and alloc.fresh_left and alloc.resume_stopped():
                    return alloc.next_job()
                alloc.fresh_left = False
                return None
            alloc.open(drawn.situation, arm=drawn.arm, reason=drawn.reason)
            job = alloc.next_job()
        return job

    def land(self, job: Job, row: dict[str, Any] | None, error: str | None,
             resumed: bool = False) -> None:
        output = self.output
        if row is not None and not resumed:
            row[FINGERPRINT] = dict(self.fingerprint)
        if row is not None and output is not None and not resumed:
            try:
                output.hold(job.group, row)
            except RowError as exc:  # the agent put something in the row JSON cannot hold
                row, error = None, f"agent output cannot be written as JSON: {exc}"
        if row is None:
            self.lost += 1
            self.committed -= 1
            self.first_error = self.first_error or (mask_secrets(error) if error else error)
            self.alloc.land(job, None, None)
        else:
            self.trajectories.append(row)
            self.alloc.land(job, _signature(row, self.inputs.grader is not None), row)
            self.progress.update(len(self.trajectories))
        if output is not None:
            output.flush_settled()

    def resume(self, job: Job) -> bool:
        """Land the row an earlier run of this output= file already holds for ``job``."""
        if self.output is None:
            return False
        stored = self.output.take(job.group.situation.scenario_id, job.rollout_index)
        if stored is None:
            return False
        self.land(job, stored, None, resumed=True)
        return True

    def settled(self, done: set[_Rollout]) -> Iterator[tuple[Job, _Rollout]]:
        """The finished rollouts, taken out of ``inflight`` in the order they were submitted."""
        for fut in sorted(done, key=lambda f: self.inflight[f][0]):
            yield self.inflight.pop(fut)[1], fut

    def loop(self) -> None:
        """Play until a stop; ``self.stop`` says which."""
        cfg, inflight = self.cfg, self.inflight
        while True:
            elapsed = time.monotonic() - self.start
            if cfg.time_budget and elapsed >= cfg.time_budget:
                self.stop = "time_budget"
                return
            open_new = not (cfg.time_budget and elapsed >= _CLOSING_SHARE * cfg.time_budget)
            while len(inflight) < self.threads and self.committed < cfg.budget:
                if not self.trajectories and self.lost + len(inflight) >= cfg.lost_limit:
                    break  # an agent that never succeeded gets exactly lost_limit tries
                job = self.next_job(open_new)
                if job is None:
                    break
                self.committed += 1
                if self.resume(job):
                    continue
                if self.pool is None:
                    self.land(job, *_play(self.inputs, job))
                    if self.lost >= cfg.lost_limit or (cfg.time_budget and self.time_up()):
                        break
                    continue
                fut = self.pool.submit(_play, self.inputs, job)
                inflight[fut] = (self.seq, job)
                fut.add_done_callback(self.finished.put)
                self.seq += 1
            if self.lost >= cfg.lost_limit:
                self.stop = "agent_failed" if not self.trajectories else "agent_errors"
                return
            if not inflight:
                if self.pool is None and not self.time_up() and self.committed < cfg.budget and (
                    open_new and self.source.exhausted is None
                ):
                    continue  # the inline loop paused only to check the clock
                self.stop = "budget" if self.committed >= cfg.budget else (
                    "time_budget" if self.time_up() or not open_new else
                    self.source.exhausted or "situations_exhausted")
                return
            for job, fut in self.settled(self.wait()):
                self.land(job, *fut.result())

    def wait(self) -> set[_Rollout]:
        """The rollouts that ended: every one in flight when reproducible, else those that
        ended by the first one's end; fewer when the clock runs out first."""
        deadline = self.start + self.cfg.time_budget if self.cfg.time_budget else None
        want = len(self.inflight) if self.reproducible else 1
        done: set[_Rollout] = set()
        while len(done) < want:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                done.add(self.finished.get(timeout=timeout))
            except queue.Empty:
                break
        while True:  # and every other one that has ended by now
            try:
                done.add(self.finished.get_nowait())
            except queue.Empty:  # noqa: PERF203 (the queue's only way to say it is empty)
                return done

    def drain(self) -> None:
        """After the clock or a quota: running rollouts get ``stop_grace``, the rest are
        abandoned (as is one the same spent quota hit)."""
        done, rest = cf.wait(self.inflight, timeout=self.cfg.stop_grace)
        for job, fut in self.settled(done):
            try:
                self.land(job, *fut.result())
            except QuotaError:  # noqa: PERF203 (one rollout's quota error must not stop the rest)
                self.abandoned += 1
        self.abandoned += len(rest)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        if self.output is not None:
            self.output.close()
        self.progress.finish(len(self.trajectories))


def run(inputs: RunInputs) -> RunResult:
    """Play the run to its stop; see the module docstring."""
    cfg = inputs.cfg
    repeats = inputs.task_repeats if inputs.task_repeats and not cfg.repeats_given else cfg.repeats
    sched = _Scheduler(inputs, repeats)
    halted: str | None = None  # why a QuotaError ended the run early
    try:
        try:
            sched.loop()
        except QuotaError as exc:
            sched.stop = quota_stop(exc)
            halted = f"{type(exc).__name__}: {exc}"
            _stop_models(inputs)
        except AuthError:
            _stop_models(inputs)
            raise
        if sched.inflight:
            sched.drain()
        for group in sched.alloc.groups:  # short of k at the stop: stamped before the file
            if group.state == "open" and 0 < group.landed < group.target:
                for row in group.rows:
                    row["group_cut"] = True
    finally:
        sched.close()
    trajectories, output, stop = sched.trajectories, sched.output, sched.stop
    if not trajectories and stop not in ("agent_failed",) and sched.lost and halted is None:
        stop = "agent_failed"
    search = _report(inputs, sched.source, sched.alloc, trajectories, sched.lost, sched.first_error,
                     sched.abandoned, repeats, time.monotonic() - sched.start)
    search["rollout_threads"] = sched.threads
    if output is not None and output.resumed:
        search["resumed_rows"] = output.resumed
    if output is not None and output.cut_bytes:
        search["output_torn_bytes_cut"] = output.cut_bytes
    if halted is not None:
        search["quota_error"] = mask_secrets(halted)
        search.setdefault("first_agent_error", mask_secrets(halted))
    return RunResult(trajectories=trajectories, search=search, stopped_because=stop or "budget",
                     repeats=repeats)


def _report(
    inputs: RunInputs,
    source: SituationSource,
    alloc: Allocator,
    rows: list[dict[str, Any]],
    lost: int,
    first_error: str | None,
    abandoned: int,
    repeats: int,
    elapsed: float,
) -> dict[str, Any]:
    cells = {
        tuple(v for k, v in r["scenario_dimensions"].items() if k in AXES) for r in rows
    }
    search: dict[str, Any] = {
        "rows": len(rows),
        "situations": source.issued,
        "grid_cells": len(inputs.grid.cells),
        "cells_covered": len(cells),
        "writer": getattr(inputs.writer, "name", type(inputs.writer).__name__),
        "agent": getattr(inputs.agent, "name", type(inputs.agent).__name__),
        "fault_rate": inputs.cfg.fault_rate,
        "faulted_rows": sum(1 for r in rows if r.get("faults")),
        "embedder": f"{HASH_VERSION}:{inputs.cfg.embed_dim}",
        "kernel_backend": _backend.KERNEL_BACKENDS.get("select_diverse", "python"),
        "elapsed_seconds": round(elapsed, 3),
        **source.stats,
    }
    writer_stats = getattr(inputs.writer, "stats", None)
    if callable(writer_stats):
        counts = writer_stats()
        if isinstance(counts, Mapping):
            search.update({str(k): v for k, v in counts.items()})
    if lost:
        search["agent_errors"] = lost
        search["first_agent_error"] = first_error
    if abandoned:
        search["rollouts_abandoned"] = abandoned
    given_up = sum(g.given_up for g in alloc.groups)
    if given_up:  # lost ATTEMPTS times each: the group has that many rows fewer
        search["rollouts_given_up"] = given_up
    if source.waves_abandoned:
        search["writer_waves_abandoned"] = source.waves_abandoned
    if repeats > 1:
        groups = alloc.report()
        groups["cut"] = sum(1 for g in alloc.groups if any(r.get("group_cut") for r in g.rows))
        search["groups"] = groups
    if inputs.warnings or inputs.spec.notes:
        search["warnings"] = [*inputs.warnings, *inputs.spec.notes]
    return search
