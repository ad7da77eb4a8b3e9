"""The native JSONL reader behind ``DecontamLines``: a line it decides, Python reads the same way.

Generated lines mix what tells JSON readers apart (duplicate keys, escaped keys, lone
surrogates, big ints, tiny and huge floats, ``NaN``/``Infinity``, deep nesting, odd spacing,
trailing garbage). For each line the native rules either defer it (status 3: the caller reads
it with ``json.loads``) or decide it; a decided line must be one ``json.loads`` reads as an
object whose ``prompt`` and ``task_id`` are what the rules saw: the same-task rule fires
exactly when Python's ``task_id`` is ``"t"``, and ``prompt`` counts as missing exactly when
Python's value is not a string with a non-space character.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kernel_helpers import backend_settings
from whileai import _backend

pytestmark = pytest.mark.skipif(
    _backend.KERNEL_BACKENDS["DecontamLines"] != "rust",
    reason="the pure twin defers every line (decontaminate's file tests cover it)",
)

# Escapes written the way a line on disk might spell them.
STRINGS = st.sampled_from([
    '"t"', '"\\u0074"', '"t "', '""', '"  "', '"\\t\\n"', '"caf\\u00e9"', '"é"',
    '"\\ud83d\\ude00"', '"\\ud800"', '"\\udc00x"', '"a\\"b"', '"\\/"', '"NaN"', '"\\u3000"',
    '"\\u001c"', '"bad \\x"', '"tab\there"', '"line\\u2028sep"', '"\\uDBFF\\uDFFF"',
])
SCALARS = st.sampled_from([
    "0", "-0", "1", "-1.5e-300", "1e400", "-1e400", "123456789012345678901234567890",
    "1.0000000000000000000001", "NaN", "Infinity", "-Infinity", "true", "false", "null",
    "01", "1.", "-", "tru", "1e", ".5",
])
KEYS = st.sampled_from([
    '"prompt"', '"task_id"', '"pro\\u006dpt"', '"task\\u005fid"', '"other"', '"\\ud800"',
    '"Prompt"', '""',
])
SPACE = st.sampled_from(["", " ", "\t", "\n", "  ", "\r", "\u00a0"])


def _values(depth: int) -> st.SearchStrategy[str]:
    leaf = st.one_of(STRINGS, SCALARS)
    if depth == 0:
        return leaf
    inner = _values(depth - 1)
    arrays = st.lists(inner, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]")
    objects = st.lists(st.tuples(KEYS, inner), max_size=3).map(
        lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in kv) + "}")
    return st.one_of(leaf, arrays, objects)


@st.composite
def lines(draw: st.DrawFn) -> str:
    members = draw(st.lists(st.tuples(KEYS, _values(2), SPACE), max_size=5))
    body = ",".join(f"{k}{s}:{s}{v}" for k, v, s in members)
    line = draw(SPACE) + "{" + body + "}" + draw(st.sampled_from(["", " ", ",", "}", "x"]))
    if draw(st.booleans()):
        depth = draw(st.sampled_from([62, 63, 64, 70]))
        line = line.replace("{", '{"deep":' + "[" * depth + "]" * depth + ",", 1)
    return line.replace("\n", " ")


def _python_reading(line: str) -> dict[str, object] | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


@backend_settings(400)
@given(line=lines())
def test_a_decided_line_is_read_as_python_reads_it(line: str) -> None:
    rules = _backend.DecontamLines(["prompt"], [None], ["task_id:t"], 0.8, 8)
    block = line.encode("utf-8", "surrogatepass") + b"\n"
    status, kept, _, by_rule, _, missing, _, _ = rules.check(block, 0)
    if status[0] == 3:
        return
    row = _python_reading(line)
    assert row is not None, f"decided a line Python refuses: {line!r}"
    same_task = row.get("task_id") == "t"
    assert status[0] == (2 if same_task else 1), line
    assert by_rule[0] == int(same_task)
    if not same_task:
        prompt = row.get("prompt")
        blank = not isinstance(prompt, str) or prompt.isspace() or prompt == ""
        assert missing == [int(blank)], line
        assert kept == block


def test_the_reader_keeps_python_s_last_duplicate_and_decodes_escaped_keys() -> None:
    rules = _backend.DecontamLines(["prompt"], [None], ["task_id:t"], 0.8, 8)
    block = (
        b'{"task_id": "t", "task_id": "u", "prompt": "x"}\n'
        b'{"task\\u005fid": "\\u0074", "prompt": "x"}\n'
        b'{"prompt": "x", "n": 123456789012345678901234567890, "f": 1e-400}\n'
        b'{"prompt": "x", "other": "\\ud800", "nested": [{"a": [1e400]}]}\n'
    )
    status, *_ = rules.check(block, 0)
    assert list(status) == [1, 2, 1, 1]
