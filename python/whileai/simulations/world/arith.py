"""Arithmetic the mock world can do: the true result of a calculator call, for its reply and for
the row's gold answer.

Only numbers, ``+ - * /``, parentheses and a leading minus are read (no names, no calls), so an
expression from a tool call is safe to evaluate.

>>> evaluate("315.52 * 8"), evaluate("(2 + 3) / 4"), evaluate("2 ** 8"), evaluate("1 / 0")
('2524.16', '1.25', None, None)
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

__all__ = ["evaluate", "number_text"]

_OPS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(
            node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_value(node.left), _value(node.right))
    raise ValueError("not plain arithmetic")


def number_text(value: float) -> str:
    """A result as a person reads it: at most two decimals, no trailing zeros.

    >>> number_text(2524.160000001), number_text(12.0)
    ('2524.16', '12')
    """
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def evaluate(expression: object) -> str | None:
    """The result of ``expression`` as text, or None when it is not plain arithmetic."""
    if not isinstance(expression, str) or len(expression) > 200:
        return None
    try:
        tree = ast.parse(expression.replace("x", "*").replace("×", "*"), mode="eval")
        return number_text(_value(tree.body))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
        return None
