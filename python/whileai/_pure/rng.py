"""splitmix64 random streams: one independent stream per (seed, unit) (docs/kernels.md).

>>> splitmix64_stream(0, 0, 2) == splitmix64_stream(0, 0, 2)
True
>>> 0.0 <= uniform_floats(7, 3, 1)[0] < 1.0
True
"""

from __future__ import annotations

__all__ = [
    "GOLDEN",
    "MASK64",
    "Stream",
    "bounded_ints",
    "check_bound",
    "check_count",
    "check_seed",
    "mix64",
    "splitmix64_stream",
    "uniform_floats",
]

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
_TWO_POW_MINUS_53 = 2.0**-53


def mix64(z: int) -> int:
    """The splitmix64 finaliser: a bijection on 64-bit integers."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def check_seed(seed: object, what: str = "seed") -> int:
    """Return ``seed`` reduced modulo 2**64, or raise ``TypeError`` if it is not an int."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"{what} must be an int, got {type(seed).__name__}")
    return seed & MASK64


def check_bound(bound: object) -> int:
    """Return ``bound`` if it is an int in [1, 2**64), else raise the error both backends raise."""
    if isinstance(bound, bool) or not isinstance(bound, int):
        raise TypeError(f"bound must be an int, got {type(bound).__name__}")
    if bound < 1:
        raise ValueError(f"bound must be at least 1, got {bound}")
    if bound > MASK64:
        raise ValueError(f"bound must be below 2**64, got {bound}")
    return bound


def check_count(count: object, what: str = "count") -> int:
    """Return ``count`` if it is an int >= 0, else raise the error both backends raise."""
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"{what} must be an int, got {type(count).__name__}")
    if count < 0:
        raise ValueError(f"{what} must be at least 0, got {count}")
    return count


class Stream:
    """The splitmix64 stream of one independent unit of work."""

    __slots__ = ("state",)

    def __init__(self, seed: int, unit: int) -> None:
        seed = check_seed(seed)
        unit = check_seed(unit, "unit")
        self.state = mix64((seed + mix64((unit + GOLDEN) & MASK64)) & MASK64)

    def next(self) -> int:
        """Return the next 64-bit value."""
        self.state = (self.state + GOLDEN) & MASK64
        return mix64(self.state)

    def uniform(self) -> float:
        """Return a float in [0, 1) with 53 random bits."""
        return (self.next() >> 11) * _TWO_POW_MINUS_53

    def below(self, bound: int) -> int:
        """Return an int in [0, bound) by Lemire's multiply-shift with rejection."""
        bound = check_bound(bound)
        m = self.next() * bound
        low = m & MASK64
        if low < bound:
            threshold = ((1 << 64) - bound) % bound
            while low < threshold:
                m = self.next() * bound
                low = m & MASK64
        return m >> 64


def splitmix64_stream(seed: int, unit: int, count: int) -> list[int]:
    """Return the first ``count`` raw values of the stream ``(seed, unit)``."""
    stream = Stream(seed, unit)
    return [stream.next() for _ in range(check_count(count))]


def uniform_floats(seed: int, unit: int, count: int) -> list[float]:
    """Return ``count`` floats in [0, 1) from the stream ``(seed, unit)``."""
    stream = Stream(seed, unit)
    return [stream.uniform() for _ in range(check_count(count))]


def bounded_ints(seed: int, unit: int, bound: int, count: int) -> list[int]:
    """Return ``count`` ints in [0, bound) from the stream ``(seed, unit)``."""
    stream = Stream(seed, unit)
    bound = check_bound(bound)
    return [stream.below(bound) for _ in range(check_count(count))]
