"""Order-preserving parallel map for model calls (threads live here, at the edge).

>>> parallel_map(lambda x: x * 2, [1, 2, 3], workers=2)
[2, 4, 6]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["parallel_map"]

T = TypeVar("T")
R = TypeVar("R")


def parallel_map(fn: Callable[[T], R], items: Sequence[T], *, workers: int = 8) -> list[R]:
    """``[fn(x) for x in items]`` with up to ``workers`` calls in flight; results in order.

    The first exception raised by ``fn`` propagates (after the running calls finish).
    """
    if workers <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(fn, items))
