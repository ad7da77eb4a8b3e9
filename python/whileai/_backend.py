"""The one switch between the Rust kernels (``whileai._native``) and the pure-Python ones.

Chosen once, at import:

- ``WHILEAI_PURE=1`` forces the pure-Python kernels;
- ``WHILEAI_REQUIRE_NATIVE=1`` makes a missing or stale native module an error;
- otherwise the native module is used when it imports and its version matches the package,
  and the pure kernels are used silently when it is absent. A stale native module (built
  from another version) is refused with a warning.

Both backends return exactly the same results for the same inputs and seed, so the choice
changes speed only. No other module imports ``_native`` or ``_pure``: call the kernels from here.

>>> from whileai import _backend
>>> _backend.BACKEND in ("rust", "python")
True
>>> _backend.hash64("order") == _backend.hash64("order")
True
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

from whileai import _pure
from whileai._version import __version__
from whileai.config import flag
from whileai.errors import BackendError

__all__ = ["BACKEND", "KERNEL_BACKENDS", "NATIVE_ERROR", "kernel_names"]

# Every kernel function, grouped by the kernel it belongs to (design section 4).
KERNELS: dict[str, tuple[str, ...]] = {
    "primitives": ("splitmix64_stream", "uniform_floats", "bounded_ints", "hash64", "tokenize"),
    "embed": ("embed", "embed_counts"),
    "resample": ("bootstrap_means", "bootstrap_mean_diff", "sign_flip_means"),
    "ngram": ("NgramIndex", "DecontamLines"),
    "scan": ("within_group_scan", "within_group_scan_columns", "within_group_scan_partials"),
    "hack_features": ("hack_text_features", "trace_masks"),
    "select": ("select_diverse",),
}


def _load_native() -> tuple[ModuleType | None, str | None]:
    """Import the native module; return it (or None) and why it was not used."""
    if flag("PURE"):
        return None, "WHILEAI_PURE is set"
    try:
        native = importlib.import_module("whileai._native")
    except ImportError as exc:
        reason = f"whileai._native did not import ({exc})"
        if flag("REQUIRE_NATIVE"):
            raise BackendError(
                f"{reason}; WHILEAI_REQUIRE_NATIVE is set. Build it with `maturin develop "
                "--release` or install a wheel, or unset WHILEAI_REQUIRE_NATIVE."
            ) from exc
        return None, reason
    native_version = getattr(native, "__version__", None)
    if native_version != __version__:
        reason = (
            f"whileai._native is version {native_version!r} but the package is {__version__!r}: "
            "rebuild it with `maturin develop --release`"
        )
        if flag("REQUIRE_NATIVE"):
            raise BackendError(reason + "; WHILEAI_REQUIRE_NATIVE is set.")
        warnings.warn(reason + "; using the pure-Python kernels.", RuntimeWarning, stacklevel=2)
        return None, reason
    return native, None


_NATIVE, NATIVE_ERROR = _load_native()
BACKEND: str = "rust" if _NATIVE is not None else "python"

# Which backend serves each kernel function. A function the native module lacks (a kernel not
# yet ported) is served by the pure backend and shows as "python" here and in `whileai info`.
KERNEL_BACKENDS: dict[str, str] = {}


def _pick(name: str) -> Any:
    if _NATIVE is not None and hasattr(_NATIVE, name):
        KERNEL_BACKENDS[name] = "rust"
        return getattr(_NATIVE, name)
    KERNEL_BACKENDS[name] = "python"
    return getattr(_pure, name)


def kernel_names() -> list[str]:
    """Return every kernel function name, in declaration order."""
    return [name for names in KERNELS.values() for name in names]


# The kernels. Signatures and exact semantics: docs/kernels.md and _native.pyi.
splitmix64_stream: Callable[[int, int, int], list[int]] = _pick("splitmix64_stream")
uniform_floats: Callable[[int, int, int], list[float]] = _pick("uniform_floats")
bounded_ints: Callable[[int, int, int, int], list[int]] = _pick("bounded_ints")
hash64: Callable[[str], int] = _pick("hash64")
tokenize: Callable[..., list[str]] = _pick("tokenize")
embed: Callable[..., Any] = _pick("embed")
embed_counts: Callable[..., Any] = _pick("embed_counts")
# NgramIndex(texts, n) -> .scan(texts) -> (best, covered, total, shared); .exact; .to_bytes
NgramIndex: type[_pure.NgramIndex] = _pick("NgramIndex")
# DecontamLines(fields, indexes, task_ids, overlap, n).check(block, examples): the rules over a
# block of JSONL lines; a line it leaves (status 3) is the caller's (the pure twin leaves all).
DecontamLines: type[_pure.DecontamLines] = _pick("DecontamLines")
# within_group_scan(indptr, indices, values, n_features, groups, reward, n_perm, seed)
#   -> (rho per feature, max |rho| per permutation, varying rows per feature)
within_group_scan: Callable[..., tuple[Any, Any, Any]] = _pick("within_group_scan")
# within_group_scan_columns(ptr, rows, vptr, values, groups, reward, n_perm, seed, conjoin, top):
#   the same scan of a column-major matrix read in place (binary columns store rows only)
within_group_scan_columns: Callable[..., tuple[Any, Any, Any]] = _pick(
    "within_group_scan_columns"
)
# within_group_scan_partials(ptr, rows, vptr, values, groups, reward, n_perm, seed) -> (blocks,
#   var_r, support, var_x, cov, perm_cov): each block's sums, added in block order by
#   clean/scan_blocks.py (how a cluster scans where the rows live)
within_group_scan_partials: Callable[..., tuple[Any, ...]] = _pick("within_group_scan_partials")
# hack_text_features(lowered agent texts, final reply lengths, top) -> (counts, vocab, ptr, rows):
# hack_scan's text features (docs/kernels.md, "Hack-scan text features").
hack_text_features: Callable[..., tuple[Any, list[str], Any, Any]] = _pick("hack_text_features")
# trace_masks(patterns, families, said, final_texts, ptr, codes, fams, bodies, paths) -> masks:
# which trace flags fire on each row (docs/kernels.md, "Trace flags").
trace_masks: Callable[..., Any] = _pick("trace_masks")
# Resampling (docs/kernels.md, "Resampling"): flat float buffers in, array('d') out.
bootstrap_means: Callable[[Any, int, int], Any] = _pick("bootstrap_means")
bootstrap_mean_diff: Callable[[Any, Any, int, int], Any] = _pick("bootstrap_mean_diff")
sign_flip_means: Callable[[Any, int, int], Any] = _pick("sign_flip_means")
# Diversity selection (docs/kernels.md, "Diversity selection"): counts, dim, k, seed, noise,
# already-selected indices -> picked indices in order.
select_diverse: Callable[..., list[int]] = _pick("select_diverse")
