"""Throttling of guesses: failed credential checks per client address and per account, and
sign-ups per client address, as token buckets kept in the server process.

A bucket holds ``burst`` tokens and gains ``burst`` per ``window`` seconds. A failed check
spends one token of the address's bucket (and of the account's, when the credential names one:
a delegated credential); once a bucket is empty, the next attempt is answered 429 with
``Retry-After`` *before* its credential is checked, so a guesser learns nothing more until the
bucket refills. A valid API key is looked up by its hash and names no account in advance, so
nobody can lock an account's key holders out by failing on purpose.

>>> clock = iter([0.0, 0.0, 0.0, 30.0]).__next__
>>> t = Throttle(burst=1, window=60.0, clock=clock)
>>> t.retry_after("addr:h") is None
True
>>> t.spend("addr:h")
>>> t.retry_after("addr:h")
60
>>> t.retry_after("addr:h")
30
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from whileai.server.services import Account
from whileai.server.services.accounts import named_account
from whileai.server.services.problems import Busy, RefusedCredential

__all__ = ["Bucket", "Throttle", "attempt", "refilled"]

MAX_KEYS = 100_000  # buckets kept at most; full ones are forgotten first


@dataclass(frozen=True, slots=True)
class Bucket:
    """Tokens left and when they were counted."""

    tokens: float
    at: float


def refilled(bucket: Bucket, now: float, *, burst: int, window: float) -> Bucket:
    """``bucket`` at ``now``: ``burst`` tokens more per ``window`` seconds, at most ``burst``.

    >>> refilled(Bucket(0.0, 0.0), 30.0, burst=10, window=60.0)
    Bucket(tokens=5.0, at=30.0)
    """
    gained = max(0.0, now - bucket.at) * burst / window
    return Bucket(min(float(burst), bucket.tokens + gained), now)


class Throttle:
    """Buckets by key (``addr:...``, ``acct:...``); safe to use from several threads."""

    def __init__(self, *, burst: int, window: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = burst
        self.window = window
        self._clock = clock
        self._buckets: dict[str, Bucket] = {}
        self._lock = threading.Lock()

    def _now(self, key: str) -> Bucket:
        full = Bucket(float(self.burst), self._clock())
        bucket = self._buckets.get(key)
        return full if bucket is None else refilled(bucket, full.at, burst=self.burst,
                                                    window=self.window)

    def retry_after(self, key: str) -> int | None:
        """Whole seconds until ``key`` has a token again, or None when it has one now."""
        with self._lock:
            bucket = self._now(key)
        if bucket.tokens >= 1.0:
            return None
        return max(1, math.ceil((1.0 - bucket.tokens) * self.window / self.burst))

    def spend(self, key: str) -> None:
        """Take one token of ``key`` (a failed attempt, or a sign-up)."""
        with self._lock:
            bucket = self._now(key)
            self._buckets[key] = Bucket(max(0.0, bucket.tokens - 1.0), bucket.at)
            if len(self._buckets) > MAX_KEYS:
                self._forget_full()

    def _forget_full(self) -> None:
        now = self._clock()
        for key, bucket in list(self._buckets.items()):
            if refilled(bucket, now, burst=self.burst, window=self.window).tokens >= self.burst:
                del self._buckets[key]
        while len(self._buckets) > MAX_KEYS:  # all busy: the oldest counts go first
            del self._buckets[next(iter(self._buckets))]


def attempt(throttle: Throttle, client: str, token: str | None,
            check: Callable[[], Account]) -> Account:
    """Run ``check`` (a credential check) unless the client or the account the credential
    names has run out of failures; a refused credential spends a token of each.

    Raises:
        Busy: (with ``retry_after``) when throttled, else what ``check`` raises.
    """
    keys = [f"addr:{client}"]
    account = named_account(token) if token else None
    if account is not None:
        keys.append(f"acct:{account}")
    for key in keys:
        wait = throttle.retry_after(key)
        if wait is not None:
            whom = "this address" if key.startswith("addr:") else "this account"
            raise Busy(f"too many refused credentials from {whom}; retry after {wait} s",
                       retry_after=wait)
    try:
        return check()
    except RefusedCredential:
        for key in keys:
            throttle.spend(key)
        raise
