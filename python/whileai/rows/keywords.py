"""``valid_kwargs``: an unknown keyword argument raises a ``TypeError`` that lists the valid ones.

>>> @valid_kwargs
... def f(rows, *, seed=0):
...     return seed
>>> f([], sede=1)
Traceback (most recent call last):
...
TypeError: f() got unexpected keyword argument(s) ['sede']; valid keywords: rows, seed
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["valid_kwargs"]

P = ParamSpec("P")
R = TypeVar("R")


def valid_kwargs(fn: Callable[P, R]) -> Callable[P, R]:
    """Wrap ``fn`` so a misspelt keyword names the keywords ``fn`` accepts."""
    params = inspect.signature(fn).parameters
    named = [
        p.name
        for p in params.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return fn
    known = frozenset(named)

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        unknown = [k for k in kwargs if k not in known]
        if unknown:
            raise TypeError(
                f"{fn.__name__}() got unexpected keyword argument(s) {unknown}; "
                f"valid keywords: {', '.join(named)}"
            )
        return fn(*args, **kwargs)

    return wrapper
