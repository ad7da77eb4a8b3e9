"""Numeric and mathematical answers: ``Numeric`` (a number within tolerance) and ``MathEqual``.

``MathEqual`` reads the final answer (the last ``\\boxed{...}``, else the text after "answer
is", else the last number or fraction), turns LaTeX into plain arithmetic (``\\frac{a}{b}``,
``\\dfrac``, ``\\sqrt``, ``\\cdot``, ``\\pi``, ``^``), and compares exactly as fractions when it
can, else numerically with a tolerance, else symbolically with sympy when it is installed (the
``math`` extra), else as normalised text.

>>> MathEqual()({"final_text": "so the result is \\\\boxed{\\\\frac{3}{4}}", "answer": "0.75"})[
...     "reward"]
1.0
>>> Numeric()({"final_text": "It costs $1,250.00 total.", "answer": 1250})["reward"]
1.0
"""

from __future__ import annotations

import ast
import math
import operator
import re
from fractions import Fraction
from typing import Any

from whileai.simulations.judge.verify.base import Verifier

__all__ = ["MathEqual", "Numeric", "extract_answer", "last_number", "latex_to_expr"]

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


def _braced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the ``{...}`` opening at ``start`` and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
    return None


def extract_answer(text: str) -> str:
    """The final answer in a worked reply: last ``\\boxed{}``, else after "answer is", else all.

    >>> extract_answer("first \\\\boxed{1} then \\\\boxed{\\\\frac{1}{2}}")
    '\\\\frac{1}{2}'
    """
    text = str(text)
    at = text.rfind("\\boxed")
    if at >= 0:
        inner = _braced(text, at + len("\\boxed"))
        if inner is not None:
            return inner[0].strip()
    match = re.search(r"answer\s*(?:is|:|=)\s*(.+?)\s*(?:\.\s|\.?$)", text, re.I | re.S)
    if match:
        return match.group(1).strip().strip("$")
    return text.strip()


def latex_to_expr(text: str) -> str:
    """Plain arithmetic from simple LaTeX.

    >>> latex_to_expr("\\\\frac{1}{2} \\\\cdot 2^{3}")
    '((1)/(2))*2**(3)'
    """
    s = str(text).replace("$", "").replace("\\left", "").replace("\\right", "")
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("\\!", "")
    while "\\frac" in s:
        at = s.find("\\frac")
        top = _braced(s, at + 5)
        bottom = _braced(s, top[1]) if top else None
        if top is None or bottom is None:
            break
        s = s[:at] + f"(({top[0]})/({bottom[0]}))" + s[bottom[1] :]
    while "\\sqrt" in s:
        at = s.find("\\sqrt")
        inner = _braced(s, at + 5)
        if inner is None:
            break
        s = s[:at] + f"sqrt({inner[0]})" + s[inner[1] :]
    for a, b in (
        ("\\cdot", "*"),
        ("\\times", "*"),
        ("\\pi", "pi"),
        ("^", "**"),
        ("{", "("),
        ("}", ")"),
        ("\\,", ""),
        ("\\ ", ""),
    ):
        s = s.replace(a, b)
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)
    s = "".join(s.split()).rstrip(".")
    return re.sub(
        r"(?<=[\d)])(?=[a-zA-Z(])(?![eE][-+]?\d)", "*", s
    )  # implicit products: 2x, 2sqrt(2), )(


_OPS: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _evaluate(node: ast.AST) -> Fraction | float:
    """Evaluate a tiny arithmetic AST: numbers, + - * / **, sqrt(), pi. Anything else raises."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        number = node.value
        return Fraction(number) if isinstance(number, int) else float(number)  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            if isinstance(right, Fraction) and right.denominator == 1 and abs(right) <= 64:
                power = int(right)
                if isinstance(left, Fraction):
                    return Fraction(left) ** power
                return float(left) ** power
            return float(float(left) ** float(right))
        return _OPS[type(node.op)](left, right)  # type: ignore[no-any-return]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_evaluate(node.operand))  # type: ignore[no-any-return]
    if isinstance(node, ast.Name) and node.id == "pi":
        return math.pi
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "sqrt"
        and len(node.args) == 1
    ):
        return math.sqrt(float(_evaluate(node.args[0])))
    raise ValueError("unsupported expression")


def _value(expr: str) -> Fraction | float | None:
    try:
        return _evaluate(ast.parse(expr, mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
        return None


_SAFE_CHARS = re.compile(r"^[0-9a-zA-Z+\-*/().]*$")
_SAFE_NAMES = {"sqrt", "pi", "sin", "cos", "tan", "log", "exp", "E"}


def _safe_for_sympy(expr: str) -> bool:
    """Only arithmetic over single-letter variables and a few functions reach sympify (eval)."""
    if not _SAFE_CHARS.match(expr) or len(expr) > 200:
        return False
    names = re.findall(r"[A-Za-z_]+", re.sub(r"\d[eE][-+]?\d", "0", expr))
    return all(len(n) == 1 or n in _SAFE_NAMES for n in names)


def _sympy_equal(a: str, b: str) -> bool | None:
    if not (_safe_for_sympy(a) and _safe_for_sympy(b)):
        return None
    try:
        import sympy  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None
    try:
        diff = sympy.simplify(sympy.sympify(a) - sympy.sympify(b))
    except Exception:  # sympy raises many types on unparseable text
        return None
    return bool(diff == 0)


class MathEqual(Verifier):
    """1 when the reply's final answer equals the gold as a number or expression."""

    def __init__(
        self, *, field: str | None = None, rel_tol: float = 1e-9, name: str | None = None
    ) -> None:
        super().__init__(field=field, name=name)
        self.rel_tol = rel_tol

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        got_text = latex_to_expr(extract_answer(candidate))
        want_text = latex_to_expr(extract_answer(str(gold)))
        if not got_text:
            return 0.0, "no final answer in the reply"
        got, want = _value(got_text), _value(want_text)
        if got is None and (n := last_number(got_text)) is not None and _value(want_text):
            got = n
        if got is not None and want is not None:
            if isinstance(got, Fraction) and isinstance(want, Fraction):
                same = got == want
            else:
                same = math.isclose(float(got), float(want), rel_tol=self.rel_tol, abs_tol=1e-12)
            return (1.0 if same else 0.0), f"got {got_text!r:.40}, gold {want_text!r:.40}"
        symbolic = _sympy_equal(got_text, want_text)
        if symbolic is not None:
            return (1.0 if symbolic else 0.0), f"symbolic: {got_text!r:.40} vs {want_text!r:.40}"
        same = got_text.casefold() == want_text.casefold()
        return (1.0 if same else 0.0), f"text: {got_text!r:.40} vs {want_text!r:.40}"
