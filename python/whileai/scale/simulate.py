"""``simulate`` sharded across Ray workers: the run's tasks split by identity, the same rows.

A rollout's row depends only on its task (the situation), its rollout index and the seed (the
engine seeds each rollout from ``scenario_id`` and index), so a run over fixed tasks splits
exactly: task ``t`` goes to shard ``hash64(task key) % shards``, every shard plays its tasks with
the single-process :func:`whileai.simulations.simulate`, and the union of the shards' rows is the
set of rows one process makes with the same seed. Each shard plays with the run's ``k`` (rollouts
per task) even when its own tasks have fewer rows. Model endpoints keep one cluster-wide limit
each, held per request (:mod:`whileai.scale.slots`); ``output=`` is written per shard (each
resumable on its own) and merged into one file when every shard is done.

What does not split exactly is refused: a run that chooses its situations as it goes (no
``tasks=``), the adaptive repeat policy and ``until="saturation"`` (their decisions read the whole
run's outcomes), a clock (``time_budget``) and a budget smaller than the jobs.
"""

from __future__ import annotations

import contextlib
import gzip
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai import _backend
from whileai.errors import ConfigError
from whileai.rows.jsonl import load_rows
from whileai.rows.outbound import task_key
from whileai.rows.progress import Progress
from whileai.scale._ray import require_ray
from whileai.simulations.data import SimulationData
from whileai.simulations.generate.agents import is_model_spec
from whileai.simulations.models.spec import ModelSpec, parse_spec
from whileai.simulations.simulation import simulate

__all__ = ["shard_of", "simulate_sharded"]



def shard_of(key: str, shards: int) -> int:
    """The shard a task key belongs to: ``hash64(key) % shards`` (stable across processes).

    >>> shard_of("sc-0123456789", 1)
    0
    """
    return _backend.hash64(key) % shards


def _task_rows(tasks: object) -> list[dict[str, Any]]:
    if isinstance(tasks, SimulationData):
        return list(tasks.trajectories)
    return list(load_rows(tasks))


def _play(agent: object, rows: list[dict[str, Any]], kwargs: dict[str, Any], output: str | None,
          slots: Any, limit: int | None,
          ) -> tuple[list[dict[str, Any]], dict[str, Any], str, dict[str, Any]]:
    """One shard on a worker: the single-process simulate over its tasks.

    With a ``limit``, every model request of the shard holds a slot of its endpoint
    (:class:`~whileai.scale.slots.EndpointGate`), whatever role made it; ``slots`` limits the
    rollouts of an agent that is not a model spec. A model agent is left for ``simulate`` to
    resolve, so it is built exactly as one process builds it (logprobs, turns, tools).
    """
    from whileai.scale.slots import EndpointGate, LimitedAgent
    from whileai.simulations.models.gate import request_gate

    played: Any = LimitedAgent(agent, slots) if slots is not None else agent
    gate = request_gate(EndpointGate(limit)) if limit is not None else contextlib.nullcontext()
    try:
        with gate:
            data = simulate(played, tasks=rows, output=output, progress=False, **kwargs)
    finally:
        if slots is not None:
            played.close()
    meta = {"mode": data.mode, "rollouts_per_request": data.rollouts_per_request,
            "system_prompt": data.system_prompt, "tools": data.tools, "rubric": data.rubric}
    return data.trajectories, data.search, data.stopped_because, meta


def _merge_search(searches: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts summed, the longest shard's seconds, anything else kept when all shards agree."""
    merged: dict[str, Any] = {}
    for key in searches[0]:
        values = [s.get(key) for s in searches]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            merged[key] = sum(values)
        elif key == "elapsed_seconds":
            merged[key] = max(v for v in values if isinstance(v, (int, float)))
        elif all(v == values[0] for v in values):
            merged[key] = values[0]
    merged["shards"] = searches
    return merged


def simulate_sharded(
    agent: object,
    *,
    tasks: object,
    shards: int = 2,
    output: str | os.PathLike[str] | None = None,
    endpoint_limit: int | None = None,
    endpoint: str | None = None,
    progress: bool = True,
    **kwargs: Any,
) -> SimulationData:
    """Play a run's tasks on Ray workers, ``shards`` ways; the rows equal one process's.

    Args:
        agent: as :func:`whileai.simulations.simulate` (a model spec, a callable or an object
            with ``run``); it must pickle (Ray ships it to the workers).
        tasks: the tasks to play: a previous run, its rows, or a JSONL path.
        shards: how many Ray tasks the run is split into (each plays whole tasks).
        output: the JSONL path for the merged rows (``.gz``: compressed, as one process
            writes it); each shard writes ``<stem>.shard-<i>-of-<n>.jsonl`` (``.jsonl.gz``)
            beside it (a shared filesystem on a multi-node cluster), removed once merged.
        endpoint_limit: the most requests in flight against each model endpoint across the
            whole cluster (a Ray actor semaphore per base URL): the agent's, the writer's
            (``simulator=``) and a judge's alike, one shared limit where they are one server.
            For an agent that is not a model spec, the most of its rollouts in flight at once.
            None: each shard's own concurrency.
        endpoint: for an agent that is not a model spec, the name its limit is kept under
            (default: the agent's repr); model endpoints are named by their base URL.
        progress: a ``simulate shards: done/total`` line on stderr as shards finish (the
            shards themselves play silently).
        **kwargs: the other keywords of ``simulate`` (``tools``, ``system_prompt``,
            ``repeats``, ``budget``, ``advanced``, ``grader``, ...).

    Returns:
        A ``SimulationData`` whose rows are the union of the shards' rows, in the order one
        process lands them (tasks in order, rollouts by index); ``search`` sums the shards'
        counts and keeps each shard's report under ``"shards"``.

    Raises:
        ConfigError: ``shards < 1``, ``endpoint_limit < 1``, a keyword that would not split
            exactly (see the module docstring), or a budget smaller than the tasks' jobs.
        ImportError: Ray is not installed (``pip install 'whileai[ray]'``).

    >>> simulate_sharded.__name__  # needs a running Ray cluster; see docs/scale.md
    'simulate_sharded'
    """
    ray = require_ray()
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ConfigError(f"shards must be an int >= 1, got {shards!r}")
    refused = sorted(k for k, v in kwargs.items()
                     if k == "tasks" or (k == "time_budget" and v) or (k == "until" and v
                                                                          == "saturation"))
    if refused:
        raise ConfigError(f"simulate_sharded cannot split a run with {', '.join(refused)}: "
                          "a sharded run plays fixed tasks to the end, without a clock")
    if kwargs.get("mode") == "rl" and kwargs.get("repeat_policy") != "fixed":
        raise ConfigError("mode='rl' defaults to the adaptive repeat policy, which reads the "
                          "whole run's outcomes: pass repeat_policy='fixed' to shard it")
    if kwargs.get("repeat_policy") == "adaptive":
        raise ConfigError("repeat_policy='adaptive' reads the whole run's outcomes: use 'fixed'")
    rows = _task_rows(tasks)
    order: dict[str, int] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for i, row in enumerate(rows):
        key = task_key(row, where=f"tasks[{i}]")
        order.setdefault(key, len(order))
        groups.setdefault(key, []).append(row)
    k = kwargs.get("repeats") or kwargs.get("rollouts_per_request") or max(
        [max(len(g), 1 + max(int(r.get("rollout_index") or 0) for r in g))
         for g in groups.values()] or [1])
    budget = kwargs.get("budget", 1000)
    if budget < len(groups) * k:
        raise ConfigError(f"budget={budget} is smaller than the {len(groups)} tasks x {k} "
                          f"rollouts: a sharded run plays every job; raise budget")
    parts: list[list[dict[str, Any]]] = [[] for _ in range(shards)]
    for key, group in groups.items():
        parts[shard_of(key, shards)].extend(group)
    slots = limit = None
    if endpoint_limit is not None:
        from whileai.scale.slots import endpoint_slots

        limit = int(endpoint_limit)
        if limit < 1:
            raise ConfigError(f"endpoint_limit must be >= 1, got {endpoint_limit!r}")
        if agent is not None and not is_model_spec(agent):  # a callable calling its own server
            slots = endpoint_slots(str(endpoint or repr(agent)), limit)
    # The slot actors of the endpoints named here, made and held by the driver for the run: an
    # actor a shard made would end with that shard's last handle.
    held = [endpoint_slots(url, limit) for url in _model_endpoints(agent, kwargs)] \
        if limit is not None else []
    if not kwargs.get("repeats") and not kwargs.get("rollouts_per_request"):
        kwargs = {**kwargs, "repeats": k}  # a shard's own tasks may have fewer rows than k
    paths = [None if output is None else _shard_path(Path(output), i, shards)
             for i in range(shards)]
    play = ray.remote(_play)
    futures = {i: play.remote(agent, part, kwargs, paths[i], slots, limit)
               for i, part in enumerate(parts) if part}
    results = _gather(ray, futures, progress)
    del held  # every shard is done: the endpoints' actors may go
    done = [results[i] for i in sorted(results)]
    trajectories = sorted((r for res in done for r in res[0]),
                          key=lambda r: (order[task_key(r)], int(r.get("rollout_index") or 0)))
    if output is not None:
        _merge_files(Path(output), [p for i, p in enumerate(paths) if i in results and p])
    meta: Mapping[str, Any] = done[0][3] if done else {}
    stopped = sorted({res[2] for res in done})
    return SimulationData(
        trajectories=trajectories,
        search=_merge_search([res[1] for res in done]) if done else {"rows": 0, "shards": []},
        stopped_because=stopped[0] if len(stopped) == 1 else ",".join(stopped) or "no_tasks",
        mode=str(meta.get("mode", kwargs.get("mode", "explore"))),
        rollouts_per_request=int(meta.get("rollouts_per_request", k)),
        system_prompt=str(meta.get("system_prompt", "")),
        tools=list(meta.get("tools") or []),
        rubric=str(meta.get("rubric", "")),
    )


def _model_endpoints(agent: object, kwargs: dict[str, Any]) -> list[str]:
    """The base URLs of the run's model roles the driver can name (the agent, the writer)."""
    urls = set()
    for role in (agent, kwargs.get("simulator")):
        if isinstance(role, str | ModelSpec):  # what is_model_spec accepts
            with contextlib.suppress(ConfigError):  # a spec the driver cannot read: the shards'
                urls.add(parse_spec(role).base_url)  # gates make its actor themselves
    return sorted(urls)


def _gather(ray: Any, futures: dict[int, Any], progress: bool) -> dict[int, Any]:
    """Each shard's result by shard number, counting shards on the progress line as they end."""
    pending = {future: i for i, future in futures.items()}
    results: dict[int, Any] = {}
    with Progress("simulate shards", len(pending), unit="shards", enabled=progress) as line:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for future in ready:
                results[pending.pop(future)] = ray.get(future)
                line.advance()
    return results


def _shard_path(output: Path, i: int, shards: int) -> str:
    """``run.jsonl`` -> ``run.shard-0-of-2.jsonl`` (``run.jsonl.gz`` -> ``...jsonl.gz``).

    >>> _shard_path(Path("out/run.jsonl.gz"), 0, 2)
    'out/run.shard-0-of-2.jsonl.gz'
    """
    gz = output.suffix == ".gz"
    base = output.name.removesuffix(".gz").removesuffix(".jsonl")
    return str(output.with_name(f"{base}.shard-{i}-of-{shards}.jsonl" + (".gz" if gz else "")))


def _merge_files(output: Path, paths: list[str]) -> None:
    """Concatenate the shard files into ``output`` (through a temp file), then remove them.

    A ``.gz`` output is written compressed, as ``simulate`` writes it: the shards' lines are
    read through gzip and written through it again.
    """
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".merging")
    opener: Any = gzip.open if output.suffix == ".gz" else open
    with opener(tmp, "wb") as out:
        for path in paths:
            last = b"\n"
            with opener(path, "rb") as part:
                while block := part.read(1 << 20):
                    out.write(block)
                    last = block[-1:]
            if last != b"\n":
                out.write(b"\n")
    tmp.replace(output)
    for path in paths:
        os.remove(path)
