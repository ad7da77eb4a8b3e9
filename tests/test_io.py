"""JSONL in and out: bad lines are named by line, writes are atomic, appends are whole lines."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import whileai.simulations as zps
from whileai.errors import RowError
from whileai.rows.jsonl import LoadedRows
from whileai.rows.jsonl_write import JsonlAppender, dumps_row


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_strict_read_names_the_file_and_line_of_bad_json(tmp_path: Path) -> None:
    path = _write(tmp_path / "rows.jsonl", '{"prompt": "a"}\n\n{"prompt": \n')
    rows = []
    with pytest.raises(RowError, match=r"rows\.jsonl:3: not valid JSON .*strict=False") as caught:
        rows.extend(zps.read_jsonl(path))
    assert rows == [{"prompt": "a"}], "rows before the bad line still stream"
    assert str(path) in str(caught.value)


def test_strict_read_refuses_a_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = _write(tmp_path / "rows.jsonl", '[{"prompt": "a"}]\n')
    with pytest.raises(RowError, match=r":1: expected a JSON object .*got list"):
        zps.load_rows(path)


def test_lenient_read_skips_and_counts_every_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"prompt": "a"}\n"just a string"\n\xff\xfe\n\n{"prompt": "b"}\n{bad\n')
    reader = zps.read_jsonl(path, strict=False)
    assert [row["prompt"] for row in reader] == ["a", "b"]
    assert reader.skipped == 3
    assert reader.blank_lines == 1
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in reader.problems] == ["2", "3", "6"]
    assert "not UTF-8" in reader.problems[1]
    loaded = zps.load_rows(path, strict=False)
    assert isinstance(loaded, LoadedRows)
    assert loaded == [{"prompt": "a"}, {"prompt": "b"}]
    assert loaded.skipped == 3


def test_reading_again_starts_the_counts_over(tmp_path: Path) -> None:
    reader = zps.read_jsonl(_write(tmp_path / "r.jsonl", '{"a": 1}\nnope\n'), strict=False)
    assert len(list(reader)) == 1
    assert len(list(reader)) == 1
    assert reader.skipped == 1


def test_a_byte_order_mark_and_windows_line_ends_are_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes('\ufeff{"prompt": "é"}\r\n{"prompt": "b"}\r\n'.encode())
    assert zps.load_rows(path) == [{"prompt": "é"}, {"prompt": "b"}]


def test_load_rows_from_memory_names_the_bad_index(tmp_path: Path) -> None:
    rows = [{"prompt": "a"}]
    assert zps.load_rows(rows)[0] is rows[0]
    assert zps.load_rows(row for row in rows) == rows
    with pytest.raises(RowError, match=r"rows\[1\]: expected a dict .*got str"):
        zps.load_rows([{"prompt": "a"}, "b"])
    with pytest.raises(RowError, match="got one dict where rows were expected"):
        zps.load_rows({"prompt": "a"})
    with pytest.raises(RowError, match="got one dict"):
        zps.write_jsonl(tmp_path / "no" / "rows.jsonl", {"prompt": "a"})
    assert list(tmp_path.iterdir()) == [], "a bad source touches no file or folder"
    with pytest.raises(RowError, match="cannot read rows from a int"):
        zps.load_rows(3)


def test_load_rows_reads_an_objects_rows_list_or_method() -> None:
    class Data:
        def __init__(self) -> None:
            self.rows = [{"prompt": "a"}]

    class Lazy:
        def rows(self) -> list[dict[str, Any]]:
            return [{"prompt": "b"}]

    assert zps.load_rows(Data()) == [{"prompt": "a"}]
    assert zps.load_rows(Lazy()) == [{"prompt": "b"}]


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=10,
)


@settings(deadline=None, max_examples=40)
@given(st.lists(st.dictionaries(st.text(max_size=6), json_value, max_size=4), max_size=5))
def test_write_then_read_gives_the_same_rows(tmp_path_factory: pytest.TempPathFactory,
                                             rows: list[dict[str, Any]]) -> None:
    folder = tmp_path_factory.mktemp("jsonl")
    for name in ("rows.jsonl", "rows.jsonl.gz"):
        assert zps.write_jsonl(folder / name, rows) == len(rows)
        assert zps.load_rows(folder / name) == rows


def test_writing_keeps_unicode_readable_and_one_row_per_line(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "rows.jsonl"
    zps.write_jsonl(str(path), [{"prompt": "Grüße\nzwei Zeilen"}, {"prompt": "日本"}])
    text = path.read_text(encoding="utf-8")
    assert "Grüße" in text
    assert "日本" in text
    assert text.count("\n") == 2


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    zps.write_jsonl(path, [{"prompt": "old"}])
    with pytest.raises(RowError, match=r"rows\[1\]: cannot write field `reward` as JSON: nan"):
        zps.write_jsonl(path, [{"prompt": "new"}, {"prompt": "x", "reward": math.nan}])
    assert zps.load_rows(path) == [{"prompt": "old"}]
    assert sorted(os.listdir(tmp_path)) == ["rows.jsonl"]


def test_write_uses_the_umask_not_private_temp_permissions(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    zps.write_jsonl(path, [])
    old = os.umask(0o022)
    os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o666 & ~old


@dataclasses.dataclass(frozen=True)
class _Point:
    x: int
    tags: frozenset[str]


def test_encoding_turns_tuples_sets_and_dataclasses_into_json() -> None:
    stamp = zps.Calibration(pass_rate=0.5, k=2, ci95=(0.1, 0.9))
    line = dumps_row({"a": (1, 2), "b": {"z", "y"}, "p": _Point(x=1, tags=frozenset({"t"})),
                      "calibration": stamp})
    assert json.loads(line) == {"a": [1, 2], "b": ["y", "z"], "p": {"x": 1, "tags": ["t"]},
                                "calibration": {"pass_rate": 0.5, "k": 2, "ci95": [0.1, 0.9]}}


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"steps": [{"tool": "t", "logprob": -math.inf}]}, "`steps[0].logprob` as JSON: -inf"),
        ({"markers": {"m": math.nan}}, "`markers.m` as JSON: nan"),
        ({"blob": b"\x00"}, "`blob` as JSON: JSON cannot hold a bytes"),
    ],
)
def test_unencodable_values_are_refused_with_the_field_path(row: dict[str, Any],
                                                            field: str) -> None:
    with pytest.raises(RowError, match=r"rows\[2\]: cannot write field") as caught:
        dumps_row(row, where="rows[2]")
    assert field in str(caught.value)


def test_dumps_refuses_a_non_dict() -> None:
    with pytest.raises(RowError, match="a row must be a dict"):
        dumps_row([1], where="rows[0]")


def test_appender_writes_whole_flushed_lines_and_repairs_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_text('{"prompt": "a"}\n{"prompt": "tor', encoding="utf-8")
    with JsonlAppender(path) as out:
        out.append({"prompt": "b"})
        assert zps.load_rows(path, strict=False) == [{"prompt": "a"}, {"prompt": "b"}]
        with pytest.raises(RowError, match=r"live\.jsonl row 1: cannot write field `reward`"):
            out.append({"reward": math.nan})
    assert out.count == 1
    reader = zps.read_jsonl(path, strict=False)
    assert [r["prompt"] for r in reader] == ["a", "b"]
    assert reader.skipped == 0  # the torn tail was cut back, not left mid-file
    assert out.cut_bytes == len('{"prompt": "tor')
    with pytest.raises(RowError, match="closed"):
        out.append({"prompt": "late"})


def test_appender_from_many_threads_keeps_every_row_whole(tmp_path: Path) -> None:
    path = tmp_path / "threads.jsonl"
    with JsonlAppender(path) as out:
        def work(worker: int) -> None:
            for i in range(50):
                out.append({"prompt": f"{worker}-{i}", "pad": "x" * 500})

        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    rows = zps.load_rows(path)
    assert out.count == 200
    assert sorted(r["prompt"] for r in rows) == sorted(f"{w}-{i}" for w in range(4)
                                                       for i in range(50))


def test_a_file_can_be_rewritten_from_its_own_rows(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    zps.write_jsonl(path, [{"prompt": "a"}, {"prompt": "b"}])
    rewritten = ({**row, "reward": 1.0} for row in zps.read_jsonl(path))
    assert zps.write_jsonl(path, rewritten) == 2
    assert zps.load_rows(path) == [{"prompt": "a", "reward": 1.0}, {"prompt": "b", "reward": 1.0}]


def test_a_missing_file_is_named_when_the_reader_is_made(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl: no such JSONL file"):
        zps.read_jsonl(tmp_path / "nope.jsonl")


def test_appender_adds_to_an_existing_file_unless_told_to_truncate(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    zps.write_jsonl(path, [{"prompt": "earlier run"}])
    with JsonlAppender(path) as out:
        out.append({"prompt": "resumed"})
    assert [r["prompt"] for r in zps.load_rows(path)] == ["earlier run", "resumed"]
    with JsonlAppender(path, truncate=True) as out:
        out.append({"prompt": "fresh"})
    assert zps.load_rows(path) == [{"prompt": "fresh"}]
