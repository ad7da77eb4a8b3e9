"""The stable 64-bit text hash shared by both backends (docs/kernels.md).

>>> hash64("order") == hash64("order")
True
>>> hash64("") != hash64(" ")
True
"""

from __future__ import annotations

from whileai._pure.rng import GOLDEN, MASK64, mix64

__all__ = ["hash64", "pair64"]

_HASH_SEED = 0x243F6A8885A308D3


def hash64(text: str) -> int:
    """Return the stable 64-bit hash of ``text``'s UTF-8 bytes."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    data = text.encode("utf-8")
    h = _HASH_SEED ^ ((len(data) * GOLDEN) & MASK64)
    for start in range(0, len(data), 8):
        chunk = int.from_bytes(data[start : start + 8], "little")
        h = mix64(h ^ chunk)
    return mix64(h)


def pair64(a: int, b: int) -> int:
    """Combine two token hashes into the hash of the bigram ``a b``."""
    return mix64(((a * GOLDEN) & MASK64) ^ b)
