"""decontaminate of a JSONL file by blocks of lines: the same report and kept rows as row by row.

The file path hands plain lines to the native rules (``DecontamLines``) and reads every other
line the ordinary way; the pure backend's twin defers every line. Each test compares the file
path against the in-memory path (rows already parsed), in whichever backend the suite runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _files import write_lines
from whileai import _backend
from whileai.errors import RowError
from whileai.rows.jsonl import load_rows
from whileai.simulations.clean import decontam_lines
from whileai.simulations.clean.decontam import decontaminate

EVAL = "where is my order 4412 it was due yesterday and nobody answered my emails"
ANSWER = "your order ships tomorrow from the warehouse in Zürich with tracking"
EVALS = [
    {"prompt": EVAL, "task_id": "t-eval", "answer": ANSWER},
    {"prompt": "Привет как дела с заказом номер 77 сегодня утром", "scenario_id": "sc-9"},
]

LINES = [
    json.dumps({"prompt": EVAL.upper(), "task_id": "x1"}) + "\n",  # verbatim (ASCII escapes)
    '{"prompt": "caf\\u00e9 question \\ud83d\\ude00 one", "extra": [1, 2.50, {"b": 1}]}\n',
    "\n",
    " \t\n",
    "\u3000\n",  # blank to Python (isspace), deferred natively
    '{"prompt": "' + EVAL + ' thanks a lot"}\n',  # near: 14 of 17 words
    '{"prompt": "x", "task_id": "t-eval"}\n',  # same task
    '{"prompt": "y", "scenario_id": "sc-9", "task_id": "t-eval"}\n',  # same task, scenario first
    '{"prompt": "short one"}\n',
    '{"prompt": 12, "final_text": "fine"}\n',  # not a string: missing
    '{"prompt": "\\u001c \\u3000 "}\n',  # only whitespace to Python: missing
    '{"no_prompt": true}\n',
    '{"prompt": "first", "prompt": "' + EVAL + '"}\n',  # the last one counts
    '{"pro\\u006dpt": "' + EVAL + '"}\n',  # an escaped key
    '{"prompt": "lone \\ud800 surrogate in the checked text"}\n',
    '{"other": "lone \\udc00 elsewhere", "prompt": "kept row with a lone surrogate beside"}\n',
    '{"prompt": "carriage return line"}\r\n',
    '{"prompt":"the word NaN inside a string"}\n',
    '{"prompt": "deep", "x": ' + "[" * 80 + "]" * 80 + "}\n",
    '{"prompt":"no spaces","final_text":"' + ANSWER + '","n":1e3}\n',  # reply copies an answer
    '{"prompt": "tab\\tand\\nnewline and \\"quotes\\" \\\\ done"}\n',
    '{"prompt": "' + " ".join(["word"] * 30) + '", "task_id": "other"}\n',
    '{"prompt": "last line without newline"}',
]


def _both(tmp_path: Path, train: Path, **knobs: Any) -> tuple[dict[str, Any], list[Any], bytes]:
    """Run the file path and the in-memory path; return the file report, rows and bytes."""
    out = tmp_path / "clean.jsonl"
    none, report = decontaminate(str(train), against=EVALS, output=out, **knobs)
    assert none == []
    clean, expected = decontaminate(load_rows(train), against=EVALS, **knobs)
    assert report.pop("output") == str(out)
    assert expected.pop("output") is None
    assert report == expected
    written = [json.loads(line) for line in out.read_bytes().decode("utf-8").splitlines()]
    assert written == clean
    return report, clean, out.read_bytes()


@pytest.mark.parametrize("block", [None, 1, 97])
def test_a_file_gives_the_report_and_rows_of_the_row_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int | None
) -> None:
    if block is not None:  # blocks of a line or a few: every boundary case
        monkeypatch.setattr(decontam_lines, "BLOCK_BYTES", block)
    train = write_lines(tmp_path / "train.jsonl", LINES)
    report, clean, data = _both(tmp_path, train, fields=("prompt", "final_text"))
    assert report["rows"] == len(LINES) - 3
    assert report["by_rule"] == {"same_task": 2, "verbatim": 4, "near": 1, "semantic": 0}
    assert report["by_field"]["final_text"]["verbatim"] == 1
    assert [e["index"] for e in report["examples"]] == [0, 2, 3, 4, 9]
    assert report["examples"][3]["field"] == "scenario_id"
    assert report["examples"][1]["ngram"] == "where is my order 4412 it was due"
    assert (report["missing"]["prompt"], report["short_texts"]) == (3, 11)
    # Kept plain lines are written as read; the CRLF line loses its "\r", the "NaN" one is
    # re-encoded, the last line gains its newline.
    out = data.decode("utf-8", "surrogatepass").splitlines(keepends=True)
    assert out[0] == LINES[1]
    assert '{"prompt": "carriage return line"}\n' in out
    assert out[-1] == LINES[-1] + "\n"
    assert LINES[17] not in out
    assert {"prompt": "the word NaN inside a string"} in clean


def test_a_byte_order_mark_and_a_reply_field(tmp_path: Path) -> None:
    train = write_lines(tmp_path / "train.jsonl", LINES[:4] + LINES[19:], prefix=b"\xef\xbb\xbf")
    report, clean, data = _both(tmp_path, train, fields=("final_text",), overlap=0.5)
    assert report["by_rule"]["verbatim"] == 1
    assert not data.startswith(b"\xef\xbb\xbf")
    assert len(clean) == report["kept"] == 5


@pytest.mark.parametrize("block", [None, 40])
def test_a_bad_line_is_named_by_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int | None
) -> None:
    if block is not None:
        monkeypatch.setattr(decontam_lines, "BLOCK_BYTES", block)
    for bad, message in (
        ("{oops\n", r"train\.jsonl:7: not valid JSON \(Expecting property name"),
        ("[1, 2]\n", r"train\.jsonl:7: expected a JSON object"),
        (b"\xff\n", r"train\.jsonl:7: not UTF-8 text"),
        ("[" * 300 + "]" * 300 + "\n", r"train\.jsonl:7: JSON nested deeper than 200"),
    ):
        train = tmp_path / "train.jsonl"
        raw = bad if isinstance(bad, bytes) else bad.encode()
        train.write_bytes("".join([*LINES[:5], "\n"]).encode() + raw + LINES[8].encode())
        out = tmp_path / "out.jsonl"
        with pytest.raises(RowError, match=message):
            decontaminate(str(train), against=EVALS, output=out)
        assert not out.exists()


def test_a_nan_value_in_a_kept_row_is_refused(tmp_path: Path) -> None:
    train = write_lines(tmp_path / "train.jsonl",
                        ['{"prompt": "fine"}\n', '{"prompt": "x", "r": NaN}'])
    with pytest.raises(RowError, match="field `r`"):
        decontaminate(str(train), against=EVALS, output=tmp_path / "out.jsonl")


def test_the_native_rules_decide_plain_lines_only() -> None:
    if _backend.KERNEL_BACKENDS["DecontamLines"] != "rust":
        pytest.skip("the pure twin defers every line (tested above through decontaminate)")
    index = _backend.NgramIndex([EVAL], 8)
    rules = _backend.DecontamLines(["prompt"], [index], ["task_id:t-eval"], 0.8, 8)
    block = "".join(LINES[:8] + LINES[14:18]).encode("utf-8", "surrogatepass")
    status, kept, kept_at, by_rule, by_field, missing, short, drops = rules.check(block, 2)
    assert list(status) == [2, 1, 0, 0, 3, 2, 2, 2, 3, 1, 3, 3]
    assert kept == (LINES[1] + LINES[15]).encode()
    assert kept_at == [len(LINES[1])] * 2 + [len(kept)] * 2
    assert (by_rule, by_field, missing, short) == ([2, 1, 1], [[1, 1]], [0], 2)
    assert [(d[0], d[1]) for d in drops] == [(0, "verbatim"), (5, "near")]
    assert drops[1][4:7] == (14, 17, ["where", "is", "my", "order", "4412", "it", "was", "due"])
    with pytest.raises(ValueError, match="one index"):
        _backend.DecontamLines(["prompt"], [], [], 0.8, 8)
