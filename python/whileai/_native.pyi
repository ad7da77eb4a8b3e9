"""Typed contract of the Rust module ``whileai._native`` (checked with ``mypy.stubtest``).

Every function has exactly the signature and semantics of its pure twin in ``whileai._pure``
(docs/kernels.md), including the exception class and message for bad input.
"""

from array import array
from collections.abc import Iterable, Sequence
from typing import Any, final

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

def splitmix64_stream(seed: int, unit: int, count: int) -> list[int]:
    """Return the first ``count`` raw u64 values of the stream ``(seed, unit)``.

    Raises:
        TypeError: ``seed``, ``unit`` or ``count`` is not an int.
        ValueError: ``count`` is negative.
    """
def uniform_floats(seed: int, unit: int, count: int) -> list[float]:
    """Return ``count`` floats in [0, 1) from the stream ``(seed, unit)``.

    Raises:
        TypeError: ``seed``, ``unit`` or ``count`` is not an int.
        ValueError: ``count`` is negative.
    """
def bounded_ints(seed: int, unit: int, bound: int, count: int) -> list[int]:
    """Return ``count`` ints in [0, bound) from the stream ``(seed, unit)``.

    Raises:
        TypeError: an argument is not an int.
        ValueError: ``bound`` is outside [1, 2**64) or ``count`` is negative.
    """
def hash64(text: str) -> int:
    """Return the stable 64-bit hash of ``text``'s UTF-8 bytes.

    Raises:
        TypeError: ``text`` is not a str.
    """
def tokenize(text: str, numbers: bool = False) -> list[str]:
    """Split ``text`` into lowercase tokens; with ``numbers=True`` digit runs become ``<num>``.

    Raises:
        TypeError: ``text`` is not a str.
    """
def embed(texts: Iterable[str], dim: int = 256) -> array[float]:
    """Return the L2-normalised hash embeddings of every text, row-major (``len * dim``).

    Raises:
        TypeError: ``texts`` is a str or holds a non-str, or ``dim`` is not an int.
        ValueError: ``dim`` is below 1.
    """
def embed_counts(texts: Iterable[str], dim: int = 256) -> array[int]:
    """Return the integer bucket counts of every text, row-major (``len * dim``).

    Raises:
        TypeError: ``texts`` is a str or holds a non-str, or ``dim`` is not an int.
        ValueError: ``dim`` is below 1.
    """

# Ported kernels (docs/kernels.md, "Resampling" and "Scan").
def bootstrap_means(values: Sequence[float], n_resamples: int, seed: int) -> array[float]:
    """Return ``n_resamples`` bootstrap means of ``values`` (one stream per replicate).

    Raises:
        TypeError: ``n_resamples`` or ``seed`` is not an int.
        ValueError: ``values`` is empty or not finite, or ``n_resamples`` is negative.
    """
def bootstrap_mean_diff(
    a: Sequence[float], b: Sequence[float], n_resamples: int, seed: int
) -> array[float]:
    """Return ``n_resamples`` unpaired bootstrap values of ``mean(b*) - mean(a*)``.

    Raises:
        TypeError: ``n_resamples`` or ``seed`` is not an int.
        ValueError: ``a`` or ``b`` is empty or not finite, or ``n_resamples`` is negative.
    """
def sign_flip_means(diffs: Sequence[float], n_perm: int, seed: int) -> array[float]:
    """Return ``n_perm`` sign-flipped means of ``diffs`` (a paired permutation null).

    Raises:
        TypeError: ``n_perm`` or ``seed`` is not an int.
        ValueError: ``diffs`` is empty or not finite, or ``n_perm`` is negative.
    """
def select_diverse(
    counts: Sequence[int],
    dim: int,
    k: int,
    seed: int,
    noise: float = 0.0,
    selected: Sequence[int] | None = None,
) -> list[int]:
    """Pick up to ``k`` rows, each the farthest (cosine) from all chosen so far; in pick order.

    Raises:
        TypeError: ``seed``, ``k`` or an index is not an int.
        ValueError: bad ``dim``, ``k`` or ``noise``, a ragged buffer, or an index out of range.
    """
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
) -> tuple[array[float], array[float], array[int]]:
    """Return (rho per feature, max |rho| per permutation, rows per feature where it varies).

    Raises:
        TypeError: ``n_perm``, ``seed`` or ``top`` is not an int.
        ValueError: a bad ``n_features``, inputs whose lengths disagree, an index or ``conjoin``
            column out of range, a negative group or a non-finite reward.
    """
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
) -> tuple[array[float], array[float], array[int]]:
    """``within_group_scan`` of a column-major matrix, read in place.

    Raises:
        TypeError: ``n_perm``, ``seed`` or ``top`` is not an int.
        ValueError: inputs whose lengths disagree, rows out of range or not ascending within a
            column, a bad ``conjoin`` column, a negative group or a non-finite reward.
    """
def within_group_scan_partials(
    ptr: Sequence[int],
    rows: Sequence[int],
    vptr: Sequence[int],
    values: Sequence[float],
    groups: Sequence[int],
    reward: Sequence[float],
    n_perm: int = 0,
    seed: int = 0,
) -> tuple[array[int], array[float], array[int], array[float], array[float], array[float]]:
    """Each block's partial sums of the scan of a column-major matrix (docs/kernels.md, "Scan").

    Raises:
        TypeError: ``n_perm`` or ``seed`` is not an int.
        ValueError: inputs whose lengths disagree, rows out of range or not ascending within a
            column, a negative group or a non-finite reward.
    """

@final
class NgramIndex:
    """Postings from token n-grams to eval-text ids (docs/kernels.md, "N-grams")."""

    def __new__(cls, texts: Iterable[str] = (), n: int = 8) -> NgramIndex:
        """Index the n-grams of ``n`` tokens of every eval text (its id: its position).

        Raises:
            TypeError: ``texts`` is a str or holds a non-str, or ``n`` is not an int.
            ValueError: ``n`` is below 1.
        """
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
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> NgramIndex:
        """Rebuild an index from :meth:`to_bytes` output.

        Raises:
            TypeError: ``data`` is not bytes, bytearray or memoryview.
            ValueError: ``data`` is not an index's state (bad header or length).
        """
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, data: bytes | bytearray | memoryview) -> None: ...
def hack_text_features(
    texts: Iterable[str], final_chars: Sequence[int], top: int, lower: bool = False
) -> tuple[array[int], list[str], array[int], array[int]]:
    """Return hack_scan's text features: (counts, vocab, ptr, rows); ``lower`` lowercases the
    texts first by the pinned table.

    Raises:
        TypeError: ``texts`` is a str or holds a non-str, or ``top`` is not an int.
        ValueError: ``final_chars`` has another length than ``texts``, or a negative length.
    """
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
) -> array[int]:
    """Return each row's trace-flag mask, bit ``k`` for ``trace_flags.FLAGS[k]``.

    Raises:
        TypeError: a text argument is a str or holds a non-str.
        ValueError: not 13 patterns, a pattern the Rust matcher cannot match exactly, or inputs
            whose lengths disagree.
    """

@final
class DecontamLines:
    """The decontamination rules over row dicts or blocks of JSONL lines (docs/kernels.md,
    "N-grams")."""

    def __new__(
        cls,
        fields: Sequence[str],
        indexes: Sequence[NgramIndex | None],
        task_ids: Sequence[str],
        overlap: float,
        n: int,
    ) -> DecontamLines:
        """The rules over ``fields`` with one index (or None) per field.

        Raises:
            ValueError: ``fields`` and ``indexes`` differ in length.
        """
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
    def check_rows(self, rows: list[dict[str, Any]], examples: int) -> tuple[
        bytes,
        list[dict[str, Any]],
        list[int],
        list[list[int]],
        list[int],
        int,
        list[tuple[int, str, int, int, int, int, list[str], str]],
    ]:
        """Check row dicts: (status, kept rows, by_rule, by_field, missing, short_texts, drops).

        Raises:
            TypeError: an item of ``rows`` is not a dict.
        """
