"""Inputs, paths, exports and depth: each finding of issue #26 (items 3, 4, 6, 7) as a test."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.cli import main
from whileai.errors import ConfigError, InputError, RowError
from whileai.rows.jsonl_write import remove_stale_temps
from whileai.simulations.selection.pairs import build_preference_pairs

EVAL = [{"prompt": "where is my order 4412 and when will it arrive at my house"}]
TRAIN = [{"prompt": "where is my order 4412 and when will it arrive at my house",
          "final_text": "soon"},
         {"prompt": "refund order 9 please because it came broken", "final_text": "ok"}]
DEEP = "[" * 10_000 + "]" * 10_000


def _deep_row() -> dict[str, Any]:
    value: Any = 1
    for _ in range(10_000):
        value = [value]
    return {"prompt": "hi", "final_text": "x", "world_state": {"v": value}}


# 3. silent wrong answers


def test_decontaminate_never_reads_a_path_as_eval_text(tmp_path: Path) -> None:
    evals = tmp_path / "eval.jsonl"
    zps.write_jsonl(evals, EVAL)
    _, report = zps.decontaminate(TRAIN, against=[str(evals)])
    assert report["dropped"] == 1
    with pytest.raises(InputError, match=r"nope\.jsonl: no such JSONL file"):
        zps.decontaminate(TRAIN, against=[str(evals), str(tmp_path / "nope.jsonl")])
    with pytest.raises(InputError, match="is a folder"):
        zps.decontaminate(TRAIN, against=[str(tmp_path)])
    as_json = tmp_path / "eval.json"
    as_json.write_text(json.dumps(EVAL, indent=2))
    with pytest.raises(RowError, match=r"eval\.json:1"):
        zps.decontaminate(TRAIN, against=str(as_json))
    with pytest.raises(TypeError, match="mixes file paths"):
        zps.decontaminate(TRAIN, against=["evals/math.jsonl", "what is two plus two?"])
    _, texts = zps.decontaminate(TRAIN, against=[EVAL[0]["prompt"]])  # texts still work
    assert texts["dropped"] == 1


def test_check_rows_reads_a_path(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"prompt": "a"}\n{"prompt": "b", "reward": "x"}\nnot json\n')
    report = zps.check_rows(str(path))
    assert (report["rows"], report["invalid"], report["unreadable_lines"]) == (2, 1, 1)
    assert zps.check_rows(path)["rows"] == 2
    with pytest.raises(RowError, match="got bytes"):
        zps.check_rows(b'{"prompt": "a"}')


def test_load_traces_refuses_bytes() -> None:
    with pytest.raises(RowError, match="got bytes"):
        zps.load_traces(b'{"prompt": "hi"}\n')


# 4. paths and files


@pytest.mark.parametrize("split", ["../../../evil", "a/b", "..", "train\nconfigs: x", "",
                                   ".hidden", "a\\b", "tr\x00ain"])
def test_split_names_that_could_escape_or_inject_are_refused(tmp_path: Path,
                                                             split: str) -> None:
    with pytest.raises(ConfigError, match="split name"):
        zps.to_hf_folder(TRAIN, tmp_path / "ds", split=split, engine="jsonl")
    with pytest.raises(ConfigError, match="split name"):
        zps.to_hf_folder({split: TRAIN}, tmp_path / "ds", engine="jsonl")
    assert not (tmp_path / "ds").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_cli_split_is_checked_too(tmp_path: Path, capsys: Any) -> None:
    rows = tmp_path / "rows.jsonl"
    zps.write_jsonl(rows, TRAIN)
    code = main(["export", str(rows), "--kind", "hf", "--split", "../evil",
                 "-o", str(tmp_path / "ds")])
    assert code == 2
    assert "split name '../evil' is not allowed" in capsys.readouterr().err
    assert not (tmp_path / "evil.jsonl").exists()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temp_files_of_dead_writers_are_removed_on_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "rows.jsonl"
    stale = tmp_path / f".rows.jsonl.{_dead_pid()}.0badc0de.tmp"
    live = tmp_path / f".rows.jsonl.{os.getppid()}.0badc0de.tmp"
    other = tmp_path / f".other.jsonl.{_dead_pid()}.0badc0de.tmp"
    for path in (stale, live, other):
        path.write_text("half a file")
    zps.write_jsonl(target, TRAIN)
    assert not stale.exists()
    assert live.exists()
    assert other.exists()
    assert remove_stale_temps(tmp_path / "other.jsonl") == 1


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_write_jsonl_leaves_no_temp_file_on_any_exit(tmp_path: Path,
                                                     error: type[BaseException]) -> None:
    def rows() -> Any:
        yield {"prompt": "a"}
        raise error("stop")

    with pytest.raises(error):
        zps.write_jsonl(tmp_path / "rows.jsonl", rows())
    assert list(tmp_path.iterdir()) == []


# 6. exports


@pytest.mark.parametrize("engine", ["jsonl", "parquet"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_hf_export_refuses_non_json_numbers_like_jsonl(tmp_path: Path, engine: str,
                                                       bad: float) -> None:
    if engine == "parquet":
        pytest.importorskip("pyarrow")
    rows = [{"prompt": "a", "final_text": "x", "reward": 1.0},
            {"prompt": "b", "final_text": "y", "reward": bad}]
    with pytest.raises(RowError, match=r"train row 1: cannot write field `reward`"):
        zps.to_hf_folder(rows, tmp_path / "ds", engine=engine)
    with pytest.raises(RowError, match=r"cannot write field `reward`"):
        zps.write_jsonl(tmp_path / "rows.jsonl", rows)
    nested = [{"prompt": "a", "final_text": "x", "world_state": {"x": bad}}]
    with pytest.raises(RowError, match=r"world_state\.x"):
        zps.to_hf_folder(nested, tmp_path / "ds2", engine=engine)


def test_hf_parquet_keeps_column_types(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"prompt": "a", "final_text": "x", "reward": 1.0, "rollout_index": 0},
            {"prompt": "b", "final_text": "y", "reward": "1", "rollout_index": 1}]
    with pytest.raises(RowError, match=r"train row 1: field `reward`"):
        zps.to_hf_folder(rows, tmp_path / "ds", engine="parquet")
    rows[1]["reward"] = 0
    rows[1]["note"], rows[0]["note"] = "1", 1  # a free field of mixed types: JSON text
    report = zps.to_hf_folder(rows, tmp_path / "ds", engine="parquet")
    table = pq.read_table(tmp_path / "ds" / report["files"]["train"])
    types = {f.name: str(f.type) for f in table.schema}
    assert types["reward"] == "double"
    assert types["rollout_index"] == "int64"
    assert types["prompt"] == "string"
    assert table.column("note").to_pylist() == ["1", '"1"']
    assert "note" in report["json_columns"]


@pytest.mark.parametrize("engine", ["jsonl", "parquet"])
def test_rows_without_a_user_turn_are_skipped_and_counted(tmp_path: Path, engine: str) -> None:
    if engine == "parquet":
        pytest.importorskip("pyarrow")
    rows = [*TRAIN, {"final_text": "an answer to nothing"}, {"prompt": "", "final_text": "x"}]
    report = zps.to_hf_folder(rows, tmp_path / "ds", engine=engine)
    assert report["rows"]["train"] == 2
    assert report["skipped"]["no_user_turn"] == 2
    assert "skipped 2 rows with no user turn" in zps.format_hf_report(report)
    sft = zps.export_dataset(rows, tmp_path / "sft.jsonl")
    assert sft["rows_out"] == 2
    assert sft["skipped"]["no_user_turn"] == 2


def test_preference_pairs_stay_within_a_task(tmp_path: Path) -> None:
    untasked = [{"final_text": "good", "reward": 1.0}, {"final_text": "bad", "reward": 0.0}]
    pairs, report = build_preference_pairs(untasked)
    assert pairs == []
    assert report["skipped"]["no_task"] == 2
    crossed = {"chosen": {"scenario_id": "A", "prompt": "same ask", "final_text": "x"},
               "rejected": {"scenario_id": "B", "prompt": "same ask", "final_text": "y"}}
    out, rep = zps.export.preference.preference_rows([crossed])
    assert out == []
    assert rep["skipped"]["different_task"] == 1
    asks = {"chosen": {"prompt": "ask one", "final_text": "x"},
            "rejected": {"prompt": "ask two", "final_text": "y"}}
    out, rep = zps.export.preference.preference_rows([asks], format="openai")
    assert out == []
    assert rep["skipped"]["prompt_mismatch"] == 1


# 7. depth


def test_a_deep_line_is_a_row_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"prompt": "a"}\n{"x": ' + DEEP + "}\n")
    with pytest.raises(RowError, match=r"deep\.jsonl:2: JSON nested deeper than 200"):
        zps.load_rows(path)
    reader = zps.read_jsonl(path, strict=False)
    assert [r["prompt"] for r in reader] == ["a"]
    assert reader.skipped == 1
    assert "deep.jsonl:2" in reader.problems[0]


def test_deep_values_in_memory_raise_row_error_on_every_writer(tmp_path: Path) -> None:
    deep = _deep_row()
    with pytest.raises(RowError, match="nested deeper"):
        zps.export_row(deep)
    with pytest.raises(RowError, match=r"rows\[0\]: JSON nested deeper"):
        zps.write_jsonl(tmp_path / "a.jsonl", [deep])
    with pytest.raises(RowError, match="nested deeper"):
        zps.export_dataset([deep], tmp_path / "b.jsonl")
    with pytest.raises(RowError, match="nested deeper"):
        zps.to_hf_folder([deep], tmp_path / "c", engine="jsonl")


COMMANDS_READING = [
    ["grade", "{f}", "--verifier", "exact", "-o", "{out}"],
    ["report", "{f}"],
    ["export", "{f}", "-o", "{out}"],
    ["export", "{f}", "--kind", "hf", "-o", "{dir}"],
    ["export", "{f}", "--kind", "preference", "-o", "{out}"],
    ["rows", "check", "{f}"],
    ["rows", "export", "{f}", "-o", "{out}"],
    ["scan", "{f}", "--n-perm", "3"],
    ["optimize", "{f}"],
    ["decontaminate", "{f}", "--against", "{f}"],
    ["traces", "report", "{f}"],
    ["traces", "from-otel", "{f}", "-o", "{out}"],
    ["models", "logprobs", "{f}"],
    ["simulate", "--tools", "{f}", "--budget", "2", "-o", "{out}"],
    ["simulate", "--spec", "{f}", "--budget", "2", "-o", "{out}"],
    ["export", "{good}", "--tools", "{f}", "-o", "{out}"],
    ["traces", "report", "{good}", "--tools", "{f}"],
]


@pytest.mark.parametrize("argv", COMMANDS_READING, ids=lambda a: " ".join(a[:2]))
def test_a_deep_file_is_a_clean_error_in_every_command(argv: list[str], tmp_path: Path,
                                                       capsys: Any) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"prompt": "a", "x": ' + DEEP + "}\n")
    good = tmp_path / "good.jsonl"
    zps.write_jsonl(good, TRAIN)
    names = {"f": str(deep), "out": str(tmp_path / "out.jsonl"), "dir": str(tmp_path / "ds"),
             "good": str(good)}
    code = main([a.format(**names) for a in argv])
    err = capsys.readouterr().err
    assert code in (0, 1, 2)
    assert "Traceback" not in err
    assert "internal error" not in err
    assert "RecursionError" not in err
