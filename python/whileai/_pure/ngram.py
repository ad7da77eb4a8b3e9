"""The n-gram index of an eval set: build once, scan many train texts (docs/kernels.md, "N-grams").

Texts are tokenised by the shared rule (so every script yields n-grams; each Han or Kana code
point is a token). An n-gram's hash folds the token hashes left to right with ``pair64``. The
index maps each n-gram hash to the ascending ids of the eval texts that contain it, and each
eval text's normalised form (its tokens joined by one space) to the lowest id that has it.

>>> index = NgramIndex(["where is my order 4412 it was due yesterday"], n=3)
>>> best, covered, total, shared = index.scan(["hi, where is my order 4412?", "refund please"])
>>> list(best), list(covered), list(total), shared[0]
([0, -1], [5, 0], [6, 2], ['where', 'is', 'my'])
>>> list(index.exact(["Where is my ORDER 4412: it was due yesterday!"]))
[0]
>>> NgramIndex.from_bytes(index.to_bytes()).scan(["where is my order"])[1][0]
4
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Iterable, Sequence

from whileai._pure.hash import hash64, pair64
from whileai._pure.tokenize import check_texts, tokenize

__all__ = ["NgramIndex", "check_n", "gram_hashes"]

_MAGIC = b"WNGRAM01"
_HEADER = struct.Struct("<8sQQQQQ")  # magic, n, size, n_exact, n_grams, n_postings


def check_n(n: object) -> int:
    """Return ``n`` if it is an int >= 1, else raise the error both backends raise."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return n


def gram_hashes(token_hashes: Sequence[int], n: int) -> list[int]:
    """Return the hash of every n-gram (``pair64`` folded left to right), in position order."""
    out = []
    for start in range(len(token_hashes) - n + 1):
        h = token_hashes[start]
        for k in range(start + 1, start + n):
            h = pair64(h, token_hashes[k])
        out.append(h)
    return out


def _token_hashes(tokens: list[str], cache: dict[str, int]) -> list[int]:
    out = []
    for token in tokens:
        h = cache.get(token)
        if h is None:
            h = cache[token] = hash64(token)
        out.append(h)
    return out


def _u64_array(values: Sequence[int]) -> array[int]:
    arr = array("Q", values)
    if sys.byteorder != "little":
        arr.byteswap()
    return arr


class NgramIndex:
    """Postings from token n-grams to eval-text ids, built once and reusable (picklable)."""

    __slots__ = ("_exact", "_n", "_postings", "_size")

    def __init__(self, texts: Iterable[str] = (), n: int = 8) -> None:
        items = check_texts(texts)
        self._n = check_n(n)
        self._size = len(items)
        self._exact: dict[int, int] = {}
        self._postings: dict[int, list[int]] = {}
        cache: dict[str, int] = {}
        for eval_id, text in enumerate(items):
            tokens = tokenize(text)
            if not tokens:
                continue
            self._exact.setdefault(hash64(" ".join(tokens)), eval_id)
            for h in gram_hashes(_token_hashes(tokens, cache), self._n):
                ids = self._postings.get(h)
                if ids is None:
                    self._postings[h] = [eval_id]
                elif ids[-1] != eval_id:
                    ids.append(eval_id)

    @property
    def n(self) -> int:
        """The n-gram length in tokens."""
        return self._n

    @property
    def size(self) -> int:
        """How many eval texts the index was built from (ids are 0..size-1)."""
        return self._size

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"NgramIndex(size={self._size}, n={self._n}, grams={len(self._postings)})"

    def exact(self, texts: Iterable[str]) -> array[int]:
        """Return, per text, the lowest eval id with the same normalised text, else -1."""
        out = array("q")
        for text in check_texts(texts):
            tokens = tokenize(text)
            out.append(self._exact.get(hash64(" ".join(tokens)), -1) if tokens else -1)
        return out

    def scan(
        self, texts: Iterable[str]
    ) -> tuple[array[int], array[int], array[int], list[list[str]]]:
        """Return per text: best eval id (-1 if none), covered words, total words, a shared n-gram.

        The best eval text is the one whose shared n-grams cover the most words of the text
        (ties to the lowest id); covered words lie inside at least one n-gram shared with it.
        The shared n-gram is the first one (by position) shared with the best text.
        """
        _, best, covered, total, shared = self._check(texts, with_exact=False)
        return best, covered, total, shared

    def check(
        self, texts: Iterable[str]
    ) -> tuple[array[int], array[int], array[int], array[int], list[list[str]]]:
        """Return :meth:`exact` and :meth:`scan` from one tokenisation of each text.

        >>> NgramIndex(["a b c"], n=2).check(["A b c", "x a b"])
        (array('q', [0, -1]), array('q', [0, 0]), array('q', [3, 2]), array('q', [3, 3]), \
[['a', 'b'], ['a', 'b']])
        """
        return self._check(texts, with_exact=True)

    def _check(
        self, texts: Iterable[str], *, with_exact: bool
    ) -> tuple[array[int], array[int], array[int], array[int], list[list[str]]]:
        n = self._n
        postings = self._postings
        exact_out, best_out, covered_out, total_out = array("q"), array("q"), array("q"), array("q")
        shared_out: list[list[str]] = []
        cache: dict[str, int] = {}
        for text in check_texts(texts):
            tokens = tokenize(text)
            total = len(tokens)
            if with_exact:
                exact_out.append(self._exact.get(hash64(" ".join(tokens)), -1) if tokens else -1)
            hits: dict[int, list[int]] = {}
            if total >= n:
                for pos, h in enumerate(gram_hashes(_token_hashes(tokens, cache), n)):
                    ids = postings.get(h)
                    if ids is None:
                        continue
                    for eval_id in ids:
                        positions = hits.get(eval_id)
                        if positions is None:
                            hits[eval_id] = [pos]
                        else:
                            positions.append(pos)
            best, best_covered, first = -1, 0, 0
            for eval_id, positions in hits.items():
                covered, end = 0, 0
                for pos in positions:  # ascending; merge the windows [pos, pos + n)
                    stop = pos + n
                    covered += stop - max(pos, end) if stop > end else 0
                    end = max(end, stop)
                if covered > best_covered or (covered == best_covered and eval_id < best):
                    best, best_covered, first = eval_id, covered, positions[0]
            best_out.append(best)
            covered_out.append(best_covered)
            total_out.append(total)
            shared_out.append(tokens[first : first + n] if best >= 0 else [])
        return exact_out, best_out, covered_out, total_out, shared_out

    def to_bytes(self) -> bytes:
        """Serialise the index (little-endian u64 arrays behind a fixed header)."""
        exact = sorted(self._exact.items())
        grams = sorted(self._postings)
        offsets, ids = [0], []
        for h in grams:
            ids.extend(self._postings[h])
            offsets.append(len(ids))
        header = _HEADER.pack(_MAGIC, self._n, self._size, len(exact), len(grams), len(ids))
        parts = [
            _u64_array([h for h, _ in exact]),
            _u64_array([i for _, i in exact]),
            _u64_array(grams),
            _u64_array(offsets),
            _u64_array(ids),
        ]
        return header + b"".join(p.tobytes() for p in parts)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> NgramIndex:
        """Rebuild an index from :meth:`to_bytes` output."""
        index = cls.__new__(cls)
        index.__setstate__(data)
        return index

    def __getstate__(self) -> bytes:
        return self.to_bytes()

    def __setstate__(self, data: bytes | bytearray | memoryview) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"index state must be bytes, got {type(data).__name__}")
        data = bytes(data)
        if len(data) < _HEADER.size or data[:8] != _MAGIC:
            raise ValueError("not an NgramIndex state (bad header): rebuild with NgramIndex(texts)")
        _, n, size, n_exact, n_grams, n_ids = _HEADER.unpack_from(data)
        arr = array("Q")
        arr.frombytes(data[_HEADER.size :])
        if sys.byteorder != "little":
            arr.byteswap()
        if len(arr) != 2 * n_exact + n_grams + (n_grams + 1) + n_ids:
            raise ValueError("NgramIndex state is truncated or corrupt; rebuild it")
        pos = 0
        hashes = arr[pos : pos + n_exact]
        pos += n_exact
        self._exact = dict(zip(hashes, arr[pos : pos + n_exact], strict=True))
        pos += n_exact
        grams = arr[pos : pos + n_grams]
        pos += n_grams
        offsets = arr[pos : pos + n_grams + 1]
        pos += n_grams + 1
        ids = arr[pos:].tolist()
        self._postings = {h: ids[offsets[k] : offsets[k + 1]] for k, h in enumerate(grams)}
        self._n = n
        self._size = size
