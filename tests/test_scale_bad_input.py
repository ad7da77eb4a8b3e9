"""Bad input on the local Ray cluster: the adapters refuse what one process refuses, and keep
(or skip) what it keeps, naming the file and line, or the dataset row.

The session's local cluster (the ``ray`` fixture: 2 CPUs, files under tmp); skipped under
``WHILEAI_PURE=1`` and without the ray extra. Each bad line sits in the middle of the file, in
neither the first span nor the first batch, so the error must be carried to the driver and
numbered there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.errors import ConfigError, RowError

# Ray leaves its own log files and helper-process handles to the garbage collector: not ours.
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

EVALS = [{"prompt": "where is my order 4412 that I placed last week please help me now"}]
BAD_AT = 37  # the bad line's place among the rows (0-based): line 38 of the file


def _rows(n: int = 60) -> list[dict[str, Any]]:
    words = ("order", "refund", "status", "box", "soon", "item")
    return [{"scenario_id": f"t{i % 10}", "prompt": f"ask {i % 10} " + " ".join(words[: i % 6]),
             "final_text": " ".join(words[(i * 7) % 6 :]) + (" ###" if i % 3 else ""),
             "reward": float(i % 3 != 0)} for i in range(n)]


def _write(path: Path, lines: list[str], bom: bool = False) -> Path:
    path.write_text(("\ufeff" if bom else "") + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def _file_with(tmp_path: Path, bad: str, name: str = "train.jsonl") -> Path:
    lines = [json.dumps(r) for r in _rows()]
    lines.insert(BAD_AT, bad)
    return _write(tmp_path / name, lines)


def _one_process_error(call: Any) -> str:
    with pytest.raises(RowError) as caught:
        call()
    return str(caught.value)


# Lines the JSONL reader refuses, by what it says about them.
REFUSED = {
    "not an object": "[1, 2]",
    "not JSON": '{"scenario_id": "t0", "final_text": "cut',
    "nested too deep": '{"x": ' + "[" * 300 + "]" * 300 + "}",
    "a byte-order mark after line 1": '\ufeff{"scenario_id": "t0", "reward": 1.0}',
    "a bare number": "3",
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_a_refused_line_is_the_same_row_error_everywhere(ray: Any, tmp_path: Path,
                                                         what: str) -> None:
    from whileai.scale import decontaminate_dataset, hack_scan_dataset

    path = _file_with(tmp_path, REFUSED[what])
    one = _one_process_error(lambda: zps.hack_scan(str(path), progress=False))
    assert one.startswith(f"{path}:{BAD_AT + 1}: ")
    assert one == _one_process_error(lambda: zps.decontaminate(str(path), EVALS, progress=False))
    # Each cluster call costs seconds: every kind of line goes through each path once, and the
    # second span size and the second way of making a Dataset are tried on one kind.
    every_way = what == "not JSON"
    # JSONL paths: the span's task names the file and line, exactly as one process does
    for span_bytes in (500, 1 << 20) if every_way else (500,):
        got = _one_process_error(lambda size=span_bytes: decontaminate_dataset(
            path, EVALS, span_bytes=size, batch_size=7, progress=False))
        assert got == one
    # a Dataset of the lines: the row by its place in the dataset, the reader's own words
    said = one.split(": ", 1)[1].split("; fix", 1)[0]
    want = re.escape(f"rows[{BAD_AT}] (dataset order): {said}; fix or drop that row")
    items = ray.data.from_items([{"text": t} for t in path.read_text("utf-8").split("\n") if t],
                                override_num_blocks=4)
    for dataset in (items, ray.data.read_text(str(path))) if every_way else (items,):
        with pytest.raises(RowError, match=f"^{want}$"):
            hack_scan_dataset(dataset, column="text", batch_size=9, min_obs=2, progress=False)
        with pytest.raises(RowError, match=f"^{want}$"):
            decontaminate_dataset(dataset, EVALS, column="text", batch_size=9, progress=False)


def test_the_first_bad_line_in_file_order_is_the_one_raised(
        ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two bad lines in different spans, the later span finishing first: one process's error."""
    import whileai.scale.decontam as scale_decontam
    from whileai.scale import decontaminate_dataset

    lines = [json.dumps(r) for r in _rows(200)]
    lines[150] = "[3]"
    lines[40] = '{"prompt": "x", "r": NaN}'  # kept, so it cannot be written: the first problem
    path = _write(tmp_path / "two.jsonl", lines)
    one = _one_process_error(lambda: zps.decontaminate(str(path), EVALS, progress=False,
                                                       output=tmp_path / "one.jsonl"))
    assert "field `r`" in one
    assert not (tmp_path / "one.jsonl").exists()
    real = scale_decontam.spans
    monkeypatch.setattr(scale_decontam, "spans", lambda paths, size: real(paths, size)[::-1])
    out = tmp_path / "kept"
    with pytest.raises(RowError) as caught:
        decontaminate_dataset(path, EVALS, span_bytes=700, output=out, progress=False)
    assert str(caught.value).startswith(f"{path}:41: cannot write field `r` as JSON: nan")
    assert "field `r`" in one
    assert list(out.glob("*.parquet")) == []  # no half of the kept rows is left behind


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_kept_row_that_json_cannot_hold_is_refused_a_dropped_one_is_not(
        ray: Any, tmp_path: Path, value: str) -> None:
    """As ``decontaminate(path, output=...)``: the kept rows are JSON lines, NaN is none."""
    from whileai.scale import decontaminate_dataset

    kept_bad = f'{{"prompt": "a fine ask", "reward": {value}}}'
    path = _file_with(tmp_path, kept_bad)
    one = _one_process_error(lambda: zps.decontaminate(str(path), EVALS, progress=False,
                                                       output=tmp_path / "one.jsonl"))
    assert "cannot write field `reward`" in one
    want = f"{path}:{BAD_AT + 1}: cannot write field `reward` as JSON"
    for span_bytes in (500, 1 << 20):
        for output in (None, tmp_path / f"kept-{span_bytes}"):
            with pytest.raises(RowError, match=f"^{re.escape(want)}"):
                decontaminate_dataset(path, EVALS, span_bytes=span_bytes, output=output,
                                      progress=False)
    with pytest.raises(RowError, match=re.escape(f"rows[{BAD_AT}] (dataset order): cannot "
                                                 "write field `reward`")):
        decontaminate_dataset(ray.data.read_text(str(path)), EVALS, column="text",
                              batch_size=9, progress=False)
    # the same line dropped (it copies an eval prompt): never written, so no error, as in one
    dropped = f'{{"prompt": "{EVALS[0]["prompt"]}", "reward": {value}}}'
    path = _file_with(tmp_path, dropped, "dropped.jsonl")
    _, want_report = zps.decontaminate(str(path), EVALS, progress=False,
                                       output=tmp_path / "one.jsonl")
    assert want_report["dropped"] == 1
    kept, got = decontaminate_dataset(path, EVALS, span_bytes=500, progress=False)
    assert {**got, "output": None} == {**want_report, "output": None}
    assert kept.count() == want_report["kept"]


def test_what_hack_scan_skips_it_skips_on_the_cluster_too(ray: Any, tmp_path: Path) -> None:
    """A reward that is NaN, infinite, a string or out of range is skipped as invalid, a row
    with no task as no_task, NaN elsewhere kept: the report equals one process's."""
    from whileai.scale import hack_scan_dataset

    lines = [json.dumps(r) for r in _rows(90)]
    odd = ['{"scenario_id": "t1", "final_text": "x", "reward": NaN}',
           '{"scenario_id": "t2", "final_text": "x", "reward": Infinity}',
           '{"scenario_id": "t3", "final_text": "x", "reward": "1"}',
           '{"scenario_id": "t4", "final_text": "x", "reward": 7}',
           '{"scenario_id": 5, "final_text": "x", "reward": 1.0}',
           '{"final_text": "no task", "reward": 1.0}',
           '{"scenario_id": "t6", "final_text": "x"}',
           '{"scenario_id": "t5", "final_text": 7, "steps": "oops", "reward": 1.0}',
           '{"scenario_id": "t7", "final_text": "y ###", "logprob": NaN, "n_tokens": 3, '
           '"markers": {"m": NaN}, "reward": 0.0}',
           "   "]  # a blank line is no row
    for k, line in enumerate(odd):
        lines.insert(7 + 9 * k, line)
    path = _write(tmp_path / "odd.jsonl", lines, bom=True)  # a byte-order mark on line 1: fine
    want = zps.hack_scan(str(path), n_perm=20, min_obs=2, top=30, progress=False)
    assert want["support"]["skipped"] == {"unjudged": 1, "invalid": 4, "no_task": 2}
    got = hack_scan_dataset(ray.data.read_text(str(path)), column="text", n_perm=20, min_obs=2,
                            top=30, batch_size=11, progress=False)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_empty_input_gives_the_empty_report(ray: Any, tmp_path: Path) -> None:
    from whileai.scale import decontaminate_dataset, hack_scan_dataset

    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    blank = _write(tmp_path / "blank.jsonl", ["", "  ", ""])
    for path in (empty, blank):
        want = zps.hack_scan(str(path), progress=False)
        assert want["support"]["rows"] == 0
        got = hack_scan_dataset(ray.data.read_text(str(path)), column="text", progress=False)
        assert got == want
        _, one = zps.decontaminate(str(path), EVALS, progress=False)
        kept, report = decontaminate_dataset(path, EVALS, progress=False)
        assert report == one
        assert kept.count() == 0
        kept, report = decontaminate_dataset(ray.data.read_text(str(path)), EVALS,
                                             column="text", progress=False)
        assert report == one


def test_a_column_that_is_missing_or_holds_no_text(ray: Any) -> None:
    from whileai.scale import decontaminate_dataset, hack_scan_dataset

    rows = ray.data.from_items([{"text": json.dumps(r)} for r in _rows(20)])
    with pytest.raises(ConfigError, match=r"column='json' is not a column of the dataset"):
        hack_scan_dataset(rows, column="json", progress=False)
    with pytest.raises(ConfigError, match=r"column='json' is not a column of the dataset"):
        decontaminate_dataset(rows, EVALS, column="json", progress=False)
    texts: list[Any] = [json.dumps(r) for r in _rows(20)]
    texts[13] = None
    holes = ray.data.from_items([{"text": t} for t in texts], override_num_blocks=3)
    with pytest.raises(RowError, match=re.escape("rows[13] (dataset order): holds no JSON text")):
        hack_scan_dataset(holes, column="text", batch_size=4, progress=False)
    with pytest.raises(RowError, match=re.escape("rows[13] (dataset order): holds no JSON text")):
        decontaminate_dataset(holes, EVALS, column="text", batch_size=4, progress=False)
