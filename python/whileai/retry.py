"""The one retry policy of every HTTP caller: the model client, the platform client and, through
the platform client, the training sender.

One place says:

- which answers retry: :data:`RETRY_STATUSES` (429 and the transient 5xx); callers add their own
  transient failures (a refused connection, a body cut mid-reply) by calling
  :meth:`Attempts.again` for them;
- how long to wait: ``Retry-After`` when the server sends one (seconds or an HTTP date, up to
  ``max_retry_after``), else exponential backoff ``backoff * 2**retry`` capped at ``max_backoff``,
  with optional jitter drawn from an explicit seed (none by default, so waits are reproducible);
- when to stop: after ``attempts`` tries in all, or once ``total_time`` seconds have passed since
  the first try (a wait that would end past it is not started).

A layer that uses this policy is the only one retrying its request: callers above it send once.

>>> policy = Retry(attempts=3, backoff=0.5, max_backoff=8.0)
>>> [policy.delay(n) for n in range(4)]
[0.5, 1.0, 2.0, 4.0]
>>> policy.delay(0, retry_after="3")
3.0
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["RETRY_STATUSES", "Attempts", "Retry", "retry_after_seconds"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (a number or an HTTP date); None when absent or bad.

    >>> retry_after_seconds("2.5"), retry_after_seconds(None), retry_after_seconds("soon")
    (2.5, None, None)
    """
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True, slots=True, kw_only=True)
class Retry:
    """How many tries, how long in all, and how long between them.

    Args:
        attempts: tries in all, the first included (1 = never retry).
        total_time: seconds from the first try after which no new try starts.
        backoff: the first wait in seconds; each next wait doubles it.
        max_backoff: the longest backoff wait.
        max_retry_after: the longest ``Retry-After`` honoured; longer asks are capped here.
        jitter: fraction of each backoff wait drawn at random (0 = none, 0.5 = up to half less).
        seed: seed of the jitter's RNG (one stream per :class:`Attempts`).
    """

    attempts: int = 4
    total_time: float = 300.0
    backoff: float = 0.25
    max_backoff: float = 8.0
    max_retry_after: float = 30.0
    jitter: float = 0.0
    seed: int = 0

    def delay(self, retry: int, *, retry_after: str | None = None,
              rng: random.Random | None = None) -> float:
        """The wait before retry number ``retry`` (0-based), honouring ``Retry-After``."""
        asked = retry_after_seconds(retry_after)
        if asked is not None:
            return min(asked, self.max_retry_after)
        wait = min(self.max_backoff, self.backoff * float(2**retry))
        if self.jitter and rng is not None:
            wait -= wait * self.jitter * rng.random()
        return wait

    def start(self, *, sleep: Callable[[float], object] = time.sleep,
              clock: Callable[[], float] = time.monotonic) -> Attempts:
        """A fresh attempt budget for one request."""
        return Attempts(policy=self, sleep=sleep, clock=clock)


@dataclass(slots=True, kw_only=True)
class Attempts:
    """The budget of one request: count tries, wait between them, say when it is spent.

    >>> waits = []
    >>> budget = Retry(attempts=3, backoff=0.1).start(sleep=waits.append)
    >>> budget.tried(), budget.again(), budget.tried(), budget.again(), budget.tried()
    (1, True, 2, True, 3)
    >>> budget.again(), waits
    (False, [0.1, 0.2])
    """

    policy: Retry
    sleep: Callable[[float], object] = time.sleep
    clock: Callable[[], float] = time.monotonic
    count: int = 0
    started: float | None = None
    rng: random.Random | None = field(default=None, init=False)  # made at the first jittered wait

    def tried(self) -> int:
        """Record one try; return how many have been made."""
        if self.started is None:
            self.started = self.clock()
        self.count += 1
        return self.count

    def left(self) -> bool:
        """Whether another try is allowed by the attempt bound (the time bound aside)."""
        return self.count < self.policy.attempts

    def again(self, *, retry_after: str | None = None) -> bool:
        """After a failed try: wait and return True when another try fits both bounds, else
        return False at once (the caller raises, naming the URL and the last failure)."""
        if not self.left():
            return False
        if self.policy.jitter and self.rng is None:
            self.rng = random.Random(self.policy.seed)
        wait = self.policy.delay(self.count - 1, retry_after=retry_after, rng=self.rng)
        spent = self.clock() - (self.started if self.started is not None else self.clock())
        if spent + wait > self.policy.total_time:
            return False
        self.sleep(wait)
        return True
