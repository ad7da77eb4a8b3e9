"""Numeric and mathematical answers: ``Numeric`` (a number within tolerance) and ``MathEqual``.

``MathEqual`` is built on Hugging Face's ``math-verify`` (the ``math`` extra): it extracts the
final answer from each side (a ``\\boxed{}`` first, then LaTeX, then plain expressions) and
compares them as mathematics: ``\\frac34`` equals ``0.75``, ``(x+1)^2`` equals ``x^2+2x+1``,
``\\{1, 2\\}`` equals ``\\{2, 1\\}``, ``10\\%`` equals ``0.1``. ``Numeric`` needs no extra.

>>> MathEqual()({"final_text": "so the result is \\\\boxed{\\\\frac{3}{4}}", "answer": "0.75"})[
...     "reward"]
1.0
>>> Numeric()({"final_text": "It costs $1,250.00 total.", "answer": 1250})["reward"]
1.0
"""

from __future__ import annotations

import math
import re
import threading
from fractions import Fraction
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.judge.verify.base import Verifier

__all__ = ["MathEqual", "Numeric", "last_number"]

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\s*/\s*-?\d+(?:\.\d+)?)?|-?\.\d+")


def last_number(text: str) -> Fraction | float | None:
    """The last number in ``text`` (thousands commas, ``$`` and ``%`` ignored; ``a/b`` kept).

    >>> last_number("from 3 to 1,200.5 units")
    Fraction(2401, 2)
    """
    found = _NUMBER.findall(str(text))
    if not found:
        return None
    return _to_number(found[-1])


def _to_number(token: str) -> Fraction | float | None:
    token = token.replace(",", "").replace(" ", "")
    try:
        if "/" in token:
            top, bottom = token.split("/", 1)
            return Fraction(top) / Fraction(bottom)
        return Fraction(token)
    except (ValueError, ZeroDivisionError):
        try:
            return float(token)
        except ValueError:
            return None


class Numeric(Verifier):
    """1 when the last number in the reply equals the gold within ``abs_tol`` / ``rel_tol``."""

    def __init__(
        self,
        *,
        field: str | None = None,
        abs_tol: float = 1e-6,
        rel_tol: float = 1e-9,
        name: str | None = None,
    ) -> None:
        super().__init__(field=field, name=name)
        self.abs_tol, self.rel_tol = abs_tol, rel_tol

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        want = _to_number(str(gold)) if not isinstance(gold, (int, float)) else gold
        if want is None or isinstance(want, bool):
            return None, f"gold {gold!r:.40} is not a number"
        got = last_number(candidate)
        if got is None:
            return 0.0, "no number in the reply"
        same = math.isclose(float(got), float(want), rel_tol=self.rel_tol, abs_tol=self.abs_tol)
        return (1.0 if same else 0.0), f"got {float(got):g}, gold {float(want):g}"


_DELIMITED = re.compile(r"\$|\\\(|\\\[|\\boxed|\\begin\{")
_PROSE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")


def _bare(text: str) -> bool:
    """A bare answer (``x^2+1``, ``\\{1, 2\\}``): no math delimiters and no prose words."""
    return len(text) <= 200 and not _DELIMITED.search(text) and not _PROSE.search(text)


def _math_verify() -> Any:
    try:
        import math_verify  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise ImportError(
            "MathEqual needs the math-verify library: pip install 'whileai[math]'"
        ) from exc
    return math_verify


def _shown(extracted: list[Any]) -> str:
    """How an extraction reads in a reason: the parsed value and the text it came from."""
    if not extracted:
        return "nothing"
    value, source = extracted[0], extracted[-1]
    shown = str(value)[:60]
    return shown if str(source) == shown else f"{shown} (from {str(source)[:60]!r})"


class _TimedOut(Exception):
    pass


class MathEqual(Verifier):
    """1 when the reply's final answer equals the gold, as Math-Verify compares them.

    Both sides are parsed by the ``math-verify`` library (extra ``math``) with its LaTeX and
    plain-expression extraction (boxed answers first; a bare gold such as ``x^2+1`` is read as
    LaTeX), and compared by its ``verify``: numbers within ``float_rounding`` decimals, symbolic
    equality, sets, intervals, percentages, equations and matrices. ``rel_tol`` additionally
    accepts two plain numbers within that relative tolerance. ``timeout`` (whole seconds) bounds
    each parse and comparison when the verifier runs in the main thread (the library's timeout is
    a signal alarm); in worker threads, such as ``run_judge``'s, the caller's per-row deadline
    applies instead. A gold with nothing to parse, or a timeout, is ``reward=None``, never a guess.

    Raises:
        ImportError: ``math-verify`` is not installed (``pip install 'whileai[math]'``).
        ConfigError: a knob out of range.
    """

    version = "2"

    def __init__(
        self,
        *,
        field: str | None = None,
        rel_tol: float = 1e-9,
        float_rounding: int = 6,
        numeric_precision: int = 15,
        strict: bool = True,
        timeout: int | None = 5,
        name: str | None = None,
    ) -> None:
        super().__init__(field=field, name=name)
        self._mv = _math_verify()
        if isinstance(rel_tol, bool) or not isinstance(rel_tol, int | float) or rel_tol < 0:
            raise ConfigError(f"MathEqual(rel_tol=) must be a number >= 0, got {rel_tol!r}")
        for knob, value in (("float_rounding", float_rounding),
                            ("numeric_precision", numeric_precision)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"MathEqual({knob}=) must be an int >= 1, got {value!r}")
        if timeout is not None and (
                isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1):
            raise ConfigError(f"MathEqual(timeout=) must be whole seconds >= 1 or None, "
                              f"got {timeout!r}")
        self.rel_tol, self.float_rounding = float(rel_tol), float_rounding
        self.numeric_precision, self.strict, self.timeout = numeric_precision, strict, timeout
        self._config = [self._mv.LatexExtractionConfig(), self._mv.ExprExtractionConfig()]

    def _timeout(self) -> int | None:
        """The library's signal-alarm timeout works only in the main thread."""
        return self.timeout if threading.current_thread() is threading.main_thread() else None

    def _parse(self, text: str) -> list[Any]:
        for attempt in [f"${text}$", text] if _bare(text) else [text]:
            try:
                found = self._mv.parse(attempt, extraction_config=self._config,
                                       parsing_timeout=self._timeout(), raise_on_error=True)
            except self._mv.errors.TimeoutException as exc:
                raise _TimedOut(f"parsing {text[:60]!r} took over {self.timeout}s") from exc
            except Exception:  # the parser raises many types on text it cannot read
                found = []
            if found:
                return list(found)
        return []

    def _pair(self, gold: Any, got: Any) -> bool | None:
        """One gold/answer pair through ``verify`` (None: it timed out)."""
        try:
            return bool(self._mv.verify(gold, got, float_rounding=self.float_rounding,
                                        numeric_precision=self.numeric_precision,
                                        strict=self.strict, timeout_seconds=self._timeout(),
                                        raise_on_error=True))
        except self._mv.errors.TimeoutException:
            return None
        except Exception:  # an uncomparable pair is not equal (the library's rule)
            return False

    def _same(self, gold: list[Any], got: list[Any]) -> bool:
        verdicts = [self._pair(g, t) for g in gold for t in got]
        if True in verdicts or _close(gold[0], got[0], self.rel_tol):
            return True
        if None in verdicts:
            raise _TimedOut(f"comparing took over {self.timeout}s")
        return False

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        try:
            want = self._parse(str(gold))
            if not want:
                return None, f"nothing to compare in the gold {str(gold)[:60]!r}"
            got = self._parse(candidate)
            if not got:
                return 0.0, f"no final answer in the reply; gold {_shown(want)}"
            same = self._same(want, got)
        except _TimedOut as exc:
            return None, f"math-verify timed out: {exc}"
        verdict = "equal" if same else "not equal"
        return (1.0 if same else 0.0), f"{verdict}: answer {_shown(got)}, gold {_shown(want)}"


def _close(a: Any, b: Any, rel_tol: float) -> bool:
    """Two plain real numbers within ``rel_tol`` (the old ``MathEqual(rel_tol=)`` knob)."""
    if rel_tol <= 0 or isinstance(a, str) or isinstance(b, str):
        return False
    try:
        if not (getattr(a, "is_number", False) and getattr(b, "is_number", False)):
            return False
        x, y = float(a), float(b)
    except (TypeError, ValueError, OverflowError):
        return False
    return math.isfinite(x) and math.isfinite(y) and math.isclose(x, y, rel_tol=rel_tol)
