"""The reference kernels in pure Python: the definition the Rust kernels must match exactly.

Import them through ``whileai._backend``, never directly (design section 4).
"""

from __future__ import annotations

from whileai._pure.bootstrap import bootstrap_mean_diff, bootstrap_means, sign_flip_means
from whileai._pure.charclass import (
    UNICODE_VERSION,
    PinnedPattern,
    count_digits,
    count_words,
)
from whileai._pure.decontam import DecontamLines
from whileai._pure.embed import embed, embed_counts
from whileai._pure.hack_text import hack_text_features
from whileai._pure.hash import hash64
from whileai._pure.ngram import NgramIndex
from whileai._pure.rng import bounded_ints, splitmix64_stream, uniform_floats
from whileai._pure.scan import (
    within_group_scan,
    within_group_scan_columns,
    within_group_scan_partials,
)
from whileai._pure.select import select_diverse
from whileai._pure.tokenize import lower, tokenize
from whileai._pure.trace import trace_masks

__all__ = [
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
