"""A process-wide gate around every model request: where a cluster holds an endpoint's limit.

One process limits an endpoint by its own thread count; shards of a run on many machines would
each bring theirs, and the endpoint would see the sum. :mod:`whileai.scale` installs a gate in
each shard's process (:func:`request_gate`) that takes one of the endpoint's cluster-wide slots
for as long as a request is in flight, for every role (agent, writer, judge) alike, keyed by the
endpoint's base URL. Without a gate (the default) a request goes straight out.

>>> with request_gate(lambda base_url: contextlib.nullcontext()):
...     with through_gate("http://127.0.0.1:9/v1"):
...         pass
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

__all__ = ["Gate", "request_gate", "through_gate"]

Gate = Callable[[str], AbstractContextManager[object]]

_gate: Gate | None = None


@contextlib.contextmanager
def request_gate(gate: Gate) -> Iterator[None]:
    """Within the block, every model request of this process passes ``gate(base_url)``."""
    global _gate
    before, _gate = _gate, gate
    try:
        yield
    finally:
        _gate = before


@contextlib.contextmanager
def through_gate(base_url: str) -> Iterator[None]:
    """Hold the installed gate for ``base_url`` (nothing when none is installed)."""
    if _gate is None:
        yield
        return
    with _gate(base_url):
        yield
