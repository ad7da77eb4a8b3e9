"""Streaming decontamination: a JSONL file read ahead on a thread, kept lines written as read."""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from _files import write_lines
from whileai.errors import RowError
from whileai.simulations.clean.decontam import decontaminate
from whileai.simulations.clean.decontam_lines import passthrough, read_ahead, row_batches

EVAL = "where is my order 4412 it was due yesterday and nobody answered my emails"


def test_kept_lines_are_written_back_byte_for_byte(tmp_path: Path) -> None:
    lines = [
        '{"prompt": "caf\\u00e9 question one", "extra": [1, 2.50, {"b": 1, "a": 2}]}\n',
        json.dumps({"prompt": EVAL.upper()}) + "\n",  # a copy: dropped
        '{"prompt":"no spaces","n":1e3}\r\n',
        '\n',  # blank: not a row
        '{"prompt": "last line without newline"}',
    ]
    train = write_lines(tmp_path / "train.jsonl", lines)
    out = tmp_path / "clean.jsonl"
    gc_was = gc.isenabled()
    clean, report = decontaminate(str(train), against=[EVAL], output=out, chunk_size=2)
    assert gc.isenabled() == gc_was
    assert clean == []
    assert (report["rows"], report["kept"], report["by_rule"]["verbatim"]) == (4, 3, 1)
    assert out.read_bytes().decode("utf-8").splitlines() == [
        lines[0].rstrip("\n"),
        '{"prompt":"no spaces","n":1e3}',
        lines[4],
    ]
    # The same rows, in memory, as a list of dicts.
    rows, _ = decontaminate(str(train), against=[EVAL], chunk_size=3)
    assert rows == [json.loads(lines[0]), json.loads(lines[2]), json.loads(lines[4])]


def test_a_nan_row_is_refused_as_before(tmp_path: Path) -> None:
    lines = ['{"prompt": "fine"}\n', '{"prompt": "x", "r": NaN}\n']
    train = write_lines(tmp_path / "train.jsonl", lines)
    with pytest.raises(RowError, match="field `r`"):
        decontaminate(str(train), against=[EVAL], output=tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_a_bad_line_raises_in_the_caller_naming_file_and_line(tmp_path: Path) -> None:
    train = write_lines(tmp_path / "train.jsonl", ['{"prompt": "a"}\n'] * 5 + ["{oops\n"])
    threads = threading.active_count()
    with pytest.raises(RowError, match=r"train\.jsonl:6: not valid JSON"):
        decontaminate(str(train), against=[EVAL], chunk_size=2)
    assert threading.active_count() == threads  # the reader thread is gone


def test_batches_keep_order_and_lines(tmp_path: Path) -> None:
    rows = [{"prompt": f"p{i}"} for i in range(7)]
    texts = [json.dumps(r) + "\n" for r in rows]
    train = write_lines(tmp_path / "t.jsonl", [*texts[:2], "\n", *texts[2:]])  # a blank line 3
    batches = list(row_batches(str(train), 3))
    assert [len(b) for b, _, _ in batches] == [3, 3, 1]
    assert [r for b, _, _ in batches for r in b] == rows
    assert [json.loads(line) for _, lines, _ in batches for line in lines or []] == rows
    assert [n for _, _, linenos in batches for n in linenos or []] == [1, 2, 4, 5, 6, 7, 8]
    assert [(lines, n) for _, lines, n in row_batches(rows, 4)] == [(None, None)] * 2


@pytest.mark.parametrize("chunk_size", [1, 1000])
def test_a_kept_nan_row_is_named_by_its_line(tmp_path: Path, chunk_size: int) -> None:
    # Line 4 holds a NaN reward and is kept: the output cannot hold it, and the error says where
    # it came from (blank line 2 counted), on both backends and in both file paths.
    train = write_lines(tmp_path / "t.jsonl", ['{"prompt": "one two"}\n', "\n",
                                          '{"prompt": "a NaN in text", "n": "NaN"}\n',
                                          '{"prompt": "three", "reward": NaN}\n'])
    out = tmp_path / "out.jsonl"
    with pytest.raises(RowError, match=r"t\.jsonl:4: cannot write field `reward` as JSON"):
        decontaminate(str(train), against=[EVAL], output=str(out), chunk_size=chunk_size)
    assert not out.exists()
    with pytest.raises(RowError, match=r"t\.jsonl:4: cannot write field `reward`"):
        decontaminate(str(train), against=[EVAL], output=str(out), embedder="hash")


def test_read_ahead_stops_its_thread_when_the_caller_stops() -> None:
    produced: list[int] = []

    closed: list[bool] = []

    def numbers() -> Iterator[int]:
        try:
            for i in range(1000):
                produced.append(i)
                yield i
        finally:
            closed.append(True)

    threads = threading.active_count()
    for i in read_ahead(numbers(), 2):
        if i == 3:
            break
    assert threading.active_count() == threads
    assert len(produced) < 10  # at most `depth` items ahead, never the whole stream
    assert closed == [True]


def test_passthrough_strips_bom_and_line_ends() -> None:
    assert passthrough([{"a": 1}], [b'\xef\xbb\xbf{"a": 1}\r\n']) == [b'{"a": 1}\n']
    rows = [{"a": "Infinity"}, {"b": 1}]
    # "Infinity" inside a string is no number: the row is encoded again and writes fine.
    assert passthrough(rows, [b'{"a": "Infinity"}\n', b'{"b": 1}']) == [
        b'{"a": "Infinity"}\n', b'{"b": 1}\n']
    assert passthrough([], []) == []
