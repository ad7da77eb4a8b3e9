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
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from whileai import _pure
from whileai._version import __version__
from whileai.config import flag
from whileai.errors import BackendError

__all__ = [
    "BACKEND",
    "KERNEL_BACKENDS",
    "NATIVE_ERROR",
    "UNICODE_VERSION",
    "DecontamLines",
    "NgramIndex",
    "PinnedPattern",
    "bootstrap_mean_diff",
    "bootstrap_means",
    "bounded_ints",
    "count_digits",
    "count_words",
    "embed",
    "embed_counts",
    "hack_text_features",
    "hash64",
    "kernel_names",
    "lower",
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
    native_unicode = getattr(native, "UNICODE_VERSION", _pure.UNICODE_VERSION)
    if native_version != __version__ or native_unicode != _pure.UNICODE_VERSION:
        reason = (
            f"whileai._native is version {native_version!r} (Unicode {native_unicode}) but the "
            f"package is {__version__!r} (Unicode {_pure.UNICODE_VERSION}): rebuild it with "
            "`maturin develop --release`"
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


# The pinned character classes (docs/kernels.md, "One Unicode version"): the Python code both
# backends share reads text with these, never with the running Python's `re`/`str` tables.
UNICODE_VERSION: str = _pure.UNICODE_VERSION
lower = _pure.lower
PinnedPattern = _pure.PinnedPattern
count_digits = _pure.count_digits
count_words = _pure.count_words


def _pick(name: str) -> Any:
    if _NATIVE is not None and hasattr(_NATIVE, name):
        KERNEL_BACKENDS[name] = "rust"
        return getattr(_NATIVE, name)
    KERNEL_BACKENDS[name] = "python"
    return getattr(_pure, name)


def kernel_names() -> list[str]:
    """Return every kernel function name, in declaration order."""
    return [name for names in KERNELS.values() for name in names]


# The kernels. mypy reads their signatures from the stub, _native.pyi (which stubtest checks
# against the native module, and whose pure twins take the same arguments); at run time each
# name is the function `_pick` chose. Exact semantics: docs/kernels.md.
if TYPE_CHECKING:
    from whileai._native import (
        DecontamLines,
        NgramIndex,
        bootstrap_mean_diff,
        bootstrap_means,
        bounded_ints,
        embed,
        embed_counts,
        hack_text_features,
        hash64,
        select_diverse,
        sign_flip_means,
        splitmix64_stream,
        tokenize,
        trace_masks,
        uniform_floats,
        within_group_scan,
        within_group_scan_columns,
        within_group_scan_partials,
    )

    _P = ParamSpec("_P")
    _R = TypeVar("_R")

    def _twin(stub: Callable[_P, _R]) -> Callable[[Callable[_P, _R]], object]:
        """Take the pure twin of ``stub``: mypy checks it takes the same arguments and returns."""
        return lambda pure: pure

    def _same_args(stub: Callable[_P, object]) -> Callable[[Callable[_P, object]], object]:
        """Take the pure twin of ``stub``: mypy checks it takes the same arguments."""
        return lambda pure: pure

    def _pure_twins_fit_the_stub(
        index: NgramIndex, pure_index: _pure.NgramIndex,
        rules: DecontamLines, pure_rules: _pure.DecontamLines,
    ) -> None:
        """Never called: mypy checks every pure kernel against its signature in the stub."""
        _twin(splitmix64_stream)(_pure.splitmix64_stream)
        _twin(uniform_floats)(_pure.uniform_floats)
        _twin(bounded_ints)(_pure.bounded_ints)
        _twin(hash64)(_pure.hash64)
        _twin(tokenize)(_pure.tokenize)
        _twin(embed)(_pure.embed)
        _twin(embed_counts)(_pure.embed_counts)
        _twin(bootstrap_means)(_pure.bootstrap_means)
        _twin(bootstrap_mean_diff)(_pure.bootstrap_mean_diff)
        _twin(sign_flip_means)(_pure.sign_flip_means)
        _twin(within_group_scan)(_pure.within_group_scan)
        _twin(within_group_scan_columns)(_pure.within_group_scan_columns)
        _twin(within_group_scan_partials)(_pure.within_group_scan_partials)
        _twin(hack_text_features)(_pure.hack_text_features)
        _twin(trace_masks)(_pure.trace_masks)
        _twin(select_diverse)(_pure.select_diverse)
        # The classes differ, so their constructors are checked for arguments only.
        _same_args(NgramIndex)(_pure.NgramIndex)
        _same_args(NgramIndex.from_bytes)(_pure.NgramIndex.from_bytes)
        _twin(index.exact)(pure_index.exact)
        _twin(index.scan)(pure_index.scan)
        _twin(index.check)(pure_index.check)
        _twin(index.to_bytes)(pure_index.to_bytes)
        _twin(index.__setstate__)(pure_index.__setstate__)
        _twin(index.__len__)(pure_index.__len__)
        _same_args(DecontamLines)(_pure.DecontamLines)
        _twin(rules.check)(pure_rules.check)

else:
    splitmix64_stream = _pick("splitmix64_stream")
    uniform_floats = _pick("uniform_floats")
    bounded_ints = _pick("bounded_ints")
    hash64 = _pick("hash64")
    tokenize = _pick("tokenize")
    embed = _pick("embed")
    embed_counts = _pick("embed_counts")
    NgramIndex = _pick("NgramIndex")
    # DecontamLines(...).check(block, examples): the rules over a block of JSONL lines; a line
    # it leaves (status 3) is the caller's (the pure twin leaves all).
    DecontamLines = _pick("DecontamLines")
    # The scan (docs/kernels.md, "Scan"); the `_columns` form reads a column-major matrix in
    # place (binary columns store rows only); the `_partials` form returns each block's sums,
    # added in block order by clean/scan_blocks.py (how a cluster scans where the rows live).
    within_group_scan = _pick("within_group_scan")
    within_group_scan_columns = _pick("within_group_scan_columns")
    within_group_scan_partials = _pick("within_group_scan_partials")
    # hack_scan's text features and trace flags (docs/kernels.md, "Hack-scan text features",
    # "Trace flags").
    hack_text_features = _pick("hack_text_features")
    trace_masks = _pick("trace_masks")
    # Resampling (docs/kernels.md, "Resampling"): flat float buffers in, array('d') out.
    bootstrap_means = _pick("bootstrap_means")
    bootstrap_mean_diff = _pick("bootstrap_mean_diff")
    sign_flip_means = _pick("sign_flip_means")
    # Diversity selection (docs/kernels.md, "Diversity selection").
    select_diverse = _pick("select_diverse")
