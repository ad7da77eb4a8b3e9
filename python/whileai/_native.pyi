"""Typed contract of the Rust module ``whileai._native`` (checked with ``mypy.stubtest``).

Every function has exactly the signature and semantics of its pure twin in ``whileai._pure``
(docs/kernels.md), including the exception class and message for bad input.
"""

from array import array
from collections.abc import Iterable

__all__ = [
    "EMBEDDER_NAME",
    "UNICODE_VERSION",
    "__version__",
    "bounded_ints",
    "embed",
    "embed_counts",
    "hash64",
    "splitmix64_stream",
    "tokenize",
    "uniform_floats",
]

__version__: str
EMBEDDER_NAME: str
UNICODE_VERSION: str

def splitmix64_stream(seed: int, unit: int, count: int) -> list[int]: ...
def uniform_floats(seed: int, unit: int, count: int) -> list[float]: ...
def bounded_ints(seed: int, unit: int, bound: int, count: int) -> list[int]: ...
def hash64(text: str) -> int: ...
def tokenize(text: str, numbers: bool = False) -> list[str]: ...
def embed(texts: Iterable[str], dim: int = 256) -> array[float]: ...
def embed_counts(texts: Iterable[str], dim: int = 256) -> array[int]: ...
