"""Verifiers: rewards that are programs, not opinions. Each honours the judge contract.

Import them from ``whileai.simulations.verify``.

>>> from whileai.simulations.judge.verify import All, ExactMatch, Regex
>>> All(ExactMatch(), Regex(r"^\\d+$"))({"final_text": "42", "answer": "42"})["reward"]
1.0
"""

from __future__ import annotations

from whileai.simulations.judge.verify.base import Verifier, gold_of, verifier
from whileai.simulations.judge.verify.code import CodeExec, extract_code
from whileai.simulations.judge.verify.compose import All, Any, Weighted
from whileai.simulations.judge.verify.jsonv import JSONField, JSONSchema, JSONValid, schema_errors
from whileai.simulations.judge.verify.mathy import MathEqual, Numeric
from whileai.simulations.judge.verify.text import ExactMatch, Includes, MultipleChoice, Regex

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
