"""Cluster-wide limits per model endpoint: one Ray actor holding a semaphore per endpoint.

A single process keeps a model endpoint's concurrency with its own pool; across a cluster, every
shard would bring its own pool and the endpoint would see their sum. :func:`endpoint_slots`
returns (creating it once, by name) a detached-free named actor that hands out at most ``limit``
slots at a time to every worker of the cluster. :class:`EndpointGate` takes a slot for each
model request of a shard (agent, writer and judge alike, by the endpoint's base URL), so a model
endpoint never has more than ``limit`` requests in flight in total; :class:`LimitedAgent` takes
one for each rollout of an agent that is not a model spec (a callable that calls a server of its
own), under a name the caller gives.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from whileai import _backend
from whileai.scale._ray import require_ray
from whileai.simulations.generate.agents import RolloutAgent, resolve_agent

__all__ = ["EndpointGate", "LimitedAgent", "endpoint_slots"]

NAMESPACE = "whileai"


class _Slots:
    """The actor's body: an asyncio semaphore and the most slots ever out at once."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.out = 0
        self.peak = 0
        self.sem: asyncio.Semaphore | None = None

    async def acquire(self) -> None:
        if self.sem is None:  # made on the actor's event loop
            self.sem = asyncio.Semaphore(self.limit)
        await self.sem.acquire()
        self.out += 1
        self.peak = max(self.peak, self.out)

    async def release(self) -> None:
        self.out -= 1
        if self.sem is not None:
            self.sem.release()

    async def stats(self) -> dict[str, int]:
        return {"limit": self.limit, "out": self.out, "peak": self.peak}


def endpoint_slots(endpoint: str, limit: int) -> Any:
    """Return the named actor limiting ``endpoint`` to ``limit`` rollouts in flight.

    Args:
        endpoint: the endpoint's name (a model spec string or a base URL).
        limit: the most rollouts in flight against it across the cluster (>= 1).

    Returns:
        A Ray actor handle with ``acquire``, ``release`` and ``stats``.

    >>> endpoint_slots.__name__  # needs a running Ray cluster; see docs/scale.md
    'endpoint_slots'
    """
    ray = require_ray()
    name = f"whileai-slots-{_backend.hash64(endpoint):016x}-{limit}"
    actor = ray.remote(_Slots).options(
        name=name, namespace=NAMESPACE, get_if_exists=True, max_concurrency=max(1000, limit)
    )
    return actor.remote(limit)


class EndpointGate:
    """The request gate of a shard's process (:mod:`whileai.simulations.models.gate`): each
    model request holds one of its endpoint's cluster-wide slots, the endpoint named by its
    base URL, so an agent and a writer on one server share that server's ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._actors: dict[str, Any] = {}
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def __call__(self, base_url: str) -> Iterator[None]:
        ray = require_ray()
        with self._lock:
            if base_url not in self._actors:
                self._actors[base_url] = endpoint_slots(base_url, self.limit)
            slots = self._actors[base_url]
        ray.get(slots.acquire.remote())
        try:
            yield
        finally:
            ray.get(slots.release.remote())


class LimitedAgent:
    """A rollout agent that holds one of its endpoint's cluster-wide slots while it plays."""

    cpu_bound = False  # it waits on the slot actor: let the engine use threads

    def __init__(self, agent: object, slots: Any, **backend_kwargs: Any) -> None:
        self.inner: RolloutAgent = resolve_agent(agent, **backend_kwargs)
        self.slots = slots

    @property
    def writer(self) -> Any:
        """The inner agent's writer (a model agent's later turns), set by ``simulate``."""
        return getattr(self.inner, "writer", None)

    @writer.setter
    def writer(self, value: Any) -> None:
        if hasattr(self.inner, "writer"):
            self.inner.writer = value

    def run(self, situation: Any, *, world: Any, seed: int) -> Mapping[str, Any]:
        """Play one rollout with a slot held (released even when the agent raises)."""
        ray = require_ray()
        ray.get(self.slots.acquire.remote())
        try:
            return self.inner.run(situation, world=world, seed=seed)
        finally:
            ray.get(self.slots.release.remote())

    def stop(self) -> None:
        """Tell the inner agent the run is over (stop waiting on retries)."""
        stop = getattr(self.inner, "stop", None)
        if callable(stop):
            stop()

    def close(self) -> None:
        """Close the inner agent's clients, if it has any."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()
