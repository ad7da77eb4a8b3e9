"""Verifiers for verifiable tasks (``from whileai.simulations.verify import MathEqual``).

The implementation lives in ``whileai.simulations.judge.verify``; this is the public path.

>>> from whileai.simulations.verify import ExactMatch
>>> ExactMatch()({"final_text": "4", "answer": "4"})["reward"]
1.0
"""

from __future__ import annotations

from whileai.simulations.judge.verify import (
    All,
    Any,
    CodeExec,
    ExactMatch,
    Includes,
    JSONField,
    JSONSchema,
    JSONValid,
    MathEqual,
    MultipleChoice,
    Numeric,
    Regex,
    Verifier,
    Weighted,
    extract_code,
    gold_of,
    schema_errors,
    verifier,
)

__all__ = [
    "All",
    "Any",
    "CodeExec",
    "ExactMatch",
    "Includes",
    "JSONField",
    "JSONSchema",
    "JSONValid",
    "MathEqual",
    "MultipleChoice",
    "Numeric",
    "Regex",
    "Verifier",
    "Weighted",
    "extract_code",
    "gold_of",
    "schema_errors",
    "verifier",
]
