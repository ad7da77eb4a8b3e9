"""Typed contract of the Rust module ``whileai._native`` (checked with ``mypy.stubtest``).

Every function has exactly the signature and semantics of its pure twin in ``whileai._pure``
(docs/kernels.md), including the exception class and message for bad input.
"""

from array import array
from collections.abc import Iterable, Sequence
from typing import final

__all__ = [
    "EMBEDDER_NAME",
    "UNICODE_VERSION",
    "DecontamLines",
    "NgramIndex",
    "__version__",
    "bootstrap_mean_diff",
    "bootstrap_means",
    "bounded_ints",
    "embed",
    "embed_counts",
    "hack_text_features",
    "hash64",
    "select_diverse",
    "sign_flip_means",
    "splitmix64_stream",
    "tokenize",
    "trace_masks",
    "uniform_floats",
    "within_group_scan",
    "within_group_scan_columns",
    "within_group_scan_partials",
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

# Ported kernels (docs/kernels.md, "Resampling" and "Scan").
def bootstrap_means(values: Sequence[float], n_resamples: int, seed: int) -> array[float]: ...
def bootstrap_mean_diff(
    a: Sequence[float], b: Sequence[float], n_resamples: int, seed: int
) -> array[float]: ...
def sign_flip_means(diffs: Sequence[float], n_perm: int, seed: int) -> array[float]: ...
def select_diverse(
    counts: Sequence[int],
    dim: int,
    k: int,
    seed: int,
    noise: float = 0.0,
    selected: Sequence[int] | None = None,
) -> list[int]: ...
def within_group_scan(
    indptr: Sequence[int],
    indices: Sequence[int],
    values: Sequence[float],
    n_features: int,
    groups: Sequence[int],
    reward: Sequence[float],
    n_perm: int = 0,
    seed: int = 0,
    conjoin: Sequence[int] = (),
    top: int = 0,
) -> tuple[array[float], array[float], array[int]]: ...
def within_group_scan_columns(
    ptr: Sequence[int],
    rows: Sequence[int],
    vptr: Sequence[int],
    values: Sequence[float],
    groups: Sequence[int],
    reward: Sequence[float],
    n_perm: int = 0,
    seed: int = 0,
    conjoin: Sequence[int] = (),
    top: int = 0,
) -> tuple[array[float], array[float], array[int]]: ...
def within_group_scan_partials(
    ptr: Sequence[int],
    rows: Sequence[int],
    vptr: Sequence[int],
    values: Sequence[float],
    groups: Sequence[int],
    reward: Sequence[float],
    n_perm: int = 0,
    seed: int = 0,
) -> tuple[array[int], array[float], array[int], array[float], array[float], array[float]]: ...

@final
class NgramIndex:
    """Postings from token n-grams to eval-text ids (docs/kernels.md, "N-grams")."""

    def __new__(cls, texts: Iterable[str] = (), n: int = 8) -> NgramIndex: ...
    @property
    def n(self) -> int: ...
    @property
    def size(self) -> int: ...
    def __len__(self) -> int: ...
    def exact(self, texts: Iterable[str]) -> array[int]: ...
    def scan(
        self, texts: Iterable[str]
    ) -> tuple[array[int], array[int], array[int], list[list[str]]]: ...
    def check(
        self, texts: Iterable[str]
    ) -> tuple[array[int], array[int], array[int], array[int], list[list[str]]]: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> NgramIndex: ...
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, data: bytes | bytearray | memoryview) -> None: ...
def hack_text_features(
    texts: Iterable[str], final_chars: Sequence[int], top: int
) -> tuple[array[int], list[str], array[int], array[int]]: ...
def trace_masks(
    patterns: Iterable[str],
    families: Iterable[str],
    said: Iterable[str],
    final_texts: Iterable[str],
    ptr: Sequence[int],
    codes: Sequence[int],
    fams: Sequence[int],
    bodies: Iterable[str],
    paths: Iterable[str],
) -> array[int]: ...

@final
class DecontamLines:
    """The decontamination rules over blocks of JSONL lines (docs/kernels.md, "N-grams")."""

    def __new__(
        cls,
        fields: Sequence[str],
        indexes: Sequence[NgramIndex | None],
        task_ids: Sequence[str],
        overlap: float,
        n: int,
    ) -> DecontamLines: ...
    def check(self, block: bytes, examples: int) -> tuple[
        bytes,
        bytes,
        list[int],
        list[int],
        list[list[int]],
        list[int],
        int,
        list[tuple[int, str, int, int, int, int, list[str], str]],
    ]: ...
