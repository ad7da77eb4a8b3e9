"""Progress on stderr for long jobs (issue #25): where it is drawn, how it is silenced.

A terminal gets a self-updating line and a summary; a pipe gets a plain line every few seconds
at most (none for a short job) and nothing with ``--quiet``; ``progress=False`` is silent; stdout
never sees any of it, so ``--json`` output parses. No timing assertions: the off-terminal
interval is set to 0 where a test needs lines.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from whileai.rows.progress import Progress, format_bytes, format_seconds, track
from whileai.simulations.clean import decontam_lines


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"prompt": f"please check order number {i} and tell me when it ships", "task_id":
             f"t{i}"} for i in range(n)]


def _graded(asks: int = 12, k: int = 4) -> list[dict[str, Any]]:
    rows = []
    for a in range(asks):
        for r in range(k):
            good = (a + r) % 2 == 0
            rows.append({"scenario_id": f"s{a}", "rollout_index": r, "prompt": f"ask {a}",
                         "final_text": "I looked it up: shipped" if good else "no idea",
                         "reward": 1.0 if good else 0.0})
    return rows


# --- the line itself ---------------------------------------------------------------------------


def test_a_terminal_gets_a_line_redrawn_in_place_and_a_summary() -> None:
    stream = Terminal()
    with Progress("decontaminate", 300, enabled=True, stream=stream) as line:
        line.update(100, force=True, dropped=2)
        line.update(300, force=True, dropped=5)
    text = stream.getvalue()
    assert text.startswith("\rdecontaminate: 100/300 rows")
    assert "ETA" in text
    assert "dropped 2" in text
    assert text.endswith("\n")
    assert text.count("\n") == 1
    summary = text.rsplit("\r", 1)[1]
    assert summary.startswith("decontaminate: 300 rows in ")
    assert "dropped 5" in summary


def test_off_a_terminal_plain_lines_at_the_interval_and_a_summary() -> None:
    stream = io.StringIO()
    with Progress("export", 4, enabled=True, stream=stream, interval=0) as line:
        for _ in range(4):
            line.advance()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0].startswith("export: 1/4 rows")
    assert len(lines) == 5
    assert lines[-1].startswith("export: 4 rows in ")


def test_a_short_job_off_a_terminal_prints_nothing() -> None:
    stream = io.StringIO()
    with Progress("export", 4, enabled=True, stream=stream) as line:  # default interval: 5 s
        line.advance(4)
    assert stream.getvalue() == ""
    assert line.done == 4


def test_disabled_draws_nothing_even_on_a_terminal() -> None:
    stream = Terminal()
    with Progress("scan", 10, enabled=False, stream=stream) as line:
        line.stage("features", 10)
        line.advance(10)
    assert stream.getvalue() == ""


def test_unknown_target_estimates_stages_bytes_and_an_error_ending_the_line() -> None:
    stream = Terminal()
    line = Progress("pull", None, enabled=True, stream=stream, unit="bytes")
    line.update(2_500_000, force=True, rows=10)
    assert "pull: 2.5 MB  " in stream.getvalue()
    assert "rows 10" in stream.getvalue()
    line.update(5_000, force=True)
    line.estimate(0.5)
    line.update(5_000, force=True)
    assert "5.0 kB/~10.0 kB" in stream.getvalue()
    line.stage("checking")
    assert "pull [checking]: " in stream.getvalue()
    with pytest.raises(RuntimeError), line:
        raise RuntimeError("boom")
    assert stream.getvalue().endswith("\n")
    assert " in " not in stream.getvalue()


def test_track_counts_what_it_yields() -> None:
    stream = io.StringIO()
    assert list(track(["a", "b", "c"], "ray", unit="shards", stream=stream)) == ["a", "b", "c"]
    terminal = Terminal()
    assert sum(track(range(3), "ray", unit="shards", stream=terminal)) == 3
    assert terminal.getvalue().rsplit("\r", 1)[1].startswith("ray: 3 shards in ")
    assert list(track([1], "ray", enabled=False, stream=terminal)) == [1]


def test_formatters() -> None:
    assert format_seconds(3725) == "1h02m"
    assert format_seconds(61) == "1m01s"
    assert format_bytes(999) == "999 B"
    assert format_bytes(1_000_000) == "1.0 MB"


# --- the library calls ------------------------------------------------------------------------


def test_every_long_call_takes_progress_as_simulate_does() -> None:
    import inspect

    from whileai.platform.datasets import pull, push_file, push_rows
    from whileai.platform.hub import import_hf
    from whileai.platform.push import push_run

    calls = [zps.simulate, zps.decontaminate, zps.hack_scan, zps.export_dataset,
             zps.to_hf_folder, zps.publish_gate, push_rows, push_file, push_run, pull, import_hf,
             zps.SimulationData.push, zps.ScoredData.push]
    for call in calls:
        param = inspect.signature(call).parameters["progress"]
        assert param.kind is inspect.Parameter.KEYWORD_ONLY, call
        assert param.default is True, call
        assert param.annotation in (bool, "bool"), call


@contextlib.contextmanager
def on_terminal() -> Iterator[Terminal]:
    """sys.stderr replaced by a stream that says it is a terminal (inside the test body: pytest's
    own capture sets sys.stderr again after the fixtures have run)."""
    stream = Terminal()
    with contextlib.redirect_stderr(stream):
        yield stream


def test_decontaminate_reports_rows_and_drops_and_is_silent_with_progress_false() -> None:
    with on_terminal() as terminal:
        rows = _rows(50)
        clean, report = zps.decontaminate(rows, against=[rows[3]["prompt"]], chunk_size=10)
        text = terminal.getvalue()
        assert "decontaminate: 10/50 rows" in text
        assert "dropped 1" in text
        assert text.rsplit("\r", 1)[1].startswith("decontaminate: 50 rows in ")
        assert len(clean) == 49
        assert report["dropped"] == 1
        terminal.seek(0)
        terminal.truncate()
        assert zps.decontaminate(rows, against=[rows[3]["prompt"]], progress=False)[1] == report
        assert terminal.getvalue() == ""


def test_decontaminate_of_a_jsonl_file_estimates_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with on_terminal() as terminal:
        path = tmp_path / "train.jsonl"
        zps.write_jsonl(path, _rows(40))
        # A file written to a file goes by blocks of bytes: make the first block ten lines.
        ten = sum(map(len, path.read_bytes().splitlines(keepends=True)[:10]))
        monkeypatch.setattr(decontam_lines, "BLOCK_BYTES", ten)
        _, report = zps.decontaminate(str(path), against=["nothing like it at all"], chunk_size=10,
                                      output=tmp_path / "clean.jsonl")
        assert report["kept"] == 40
        assert "decontaminate: 10/~" in terminal.getvalue()  # a guess from the bytes read


def test_hack_scan_reports_its_stages() -> None:
    with on_terminal() as terminal:
        report = zps.hack_scan(_graded(), n_perm=20)
        text = terminal.getvalue()
        for stage in ("features", "matrix", "20 permutations", "conjunctions"):
            assert f"scan [{stage}]" in text
        assert text.rsplit("\r", 1)[1].startswith("scan: 48 rows in ")
        terminal.seek(0)
        terminal.truncate()
        assert zps.hack_scan(_graded(), n_perm=20, progress=False)["tau"] == report["tau"]
        assert terminal.getvalue() == ""


def test_exports_report_rows_written(tmp_path: Path) -> None:
    with on_terminal() as terminal:
        rows = [{"prompt": "hi", "final_text": "hello"}] * 5
        zps.export_dataset(rows, tmp_path / "sft.jsonl")
        assert "export [writing]" in terminal.getvalue()
        assert terminal.getvalue().rsplit("\r", 1)[1].startswith("export: 5 rows in ")
        zps.to_hf_folder(rows, tmp_path / "hf", engine="jsonl")
        assert "hf export [train: writing]" in terminal.getvalue()
        terminal.seek(0)
        terminal.truncate()
        zps.export_dataset(rows, tmp_path / "sft2.jsonl", progress=False)
        zps.to_hf_folder(rows, tmp_path / "hf2", engine="jsonl", progress=False)
        assert terminal.getvalue() == ""


def test_push_and_pull_report_rows_and_bytes(platform_key: str, tmp_path: Path) -> None:
    with on_terminal() as terminal:
        from whileai.platform.datasets import pull, push_file, push_rows

        rows = _rows(30)
        entry = push_rows(rows, "progress-set")
        assert "push: 30/30 rows" in terminal.getvalue()
        assert "bytes " in terminal.getvalue()
        pulled = pull(entry["datasetId"], tmp_path / "back.jsonl")
        assert "pull: " in terminal.getvalue()
        assert "rows 30" in terminal.getvalue()
        push_file(pulled, gate=False)
        assert "push: " in terminal.getvalue()
        assert "B/s" in terminal.getvalue()
        terminal.seek(0)
        terminal.truncate()
        push_rows(rows, "quiet-set", progress=False)
        assert len(pull(entry["datasetId"], progress=False)) == 30
        assert terminal.getvalue() == ""


def test_import_hf_reports_rows_then_the_upload(platform_key: str, offline: Path) -> None:
    datasets = pytest.importorskip("datasets")
    from whileai.platform.hub import import_hf

    source = offline / "rows.jsonl"
    source.write_text("".join(json.dumps({"question": f"{i}+1?", "answer": str(i + 1)}) + "\n"
                              for i in range(25)))
    with on_terminal() as terminal:
        assert import_hf(str(source), name="progress-hf")["rows"] == 25
        assert "import_hf: 25 rows in " in terminal.getvalue()
        assert "push: 25 rows in " in terminal.getvalue()
        terminal.seek(0)
        terminal.truncate()
        assert import_hf(str(source), name="quiet-hf", progress=False)["rows"] == 25
        assert terminal.getvalue() == ""
    assert datasets.is_progress_bar_enabled()  # the datasets bars are on again afterwards


# --- the command line -------------------------------------------------------------------------


def _cli(args: list[str], cwd: Path, *, tty: bool) -> tuple[str, str, int]:
    """Run ``python -m whileai ARGS``: stdout on a pipe, stderr on a pseudo-terminal or a pipe."""
    env = {**os.environ, "COLUMNS": "120"}
    command = [sys.executable, "-m", "whileai", *args]
    if not tty:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=120)
        return done.stdout, done.stderr, done.returncode
    leader, follower = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # EIO once the child has closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=follower, stdin=subprocess.DEVNULL)
        os.close(follower)
        out, _ = proc.communicate(timeout=120)
    finally:
        reader.join(timeout=30)
        os.close(leader)
    return out.decode(), b"".join(chunks).decode(errors="replace"), proc.returncode


@pytest.fixture
def files(tmp_path: Path) -> Path:
    rows = _rows(30)
    zps.write_jsonl(tmp_path / "train.jsonl", rows)
    zps.write_jsonl(tmp_path / "eval.jsonl", rows[:2])
    zps.write_jsonl(tmp_path / "graded.jsonl", _graded())
    return tmp_path


def test_a_terminal_gets_updates_and_json_stdout_still_parses(files: Path) -> None:
    out, err, code = _cli(["decontaminate", "train.jsonl", "--against", "eval.jsonl",
                           "--json"], files, tty=True)
    assert code == 0
    assert json.loads(out)["dropped"] == 2
    assert "\rdecontaminate: " in err
    assert "dropped 2" in err
    out, err, code = _cli(["scan", "graded.jsonl", "--n-perm", "20", "--json"], files, tty=True)
    assert json.loads(out)["n_perm"] == 20
    assert "scan [features]" in err
    assert "\rscan: 48 rows in " in err


def test_a_pipe_with_quiet_gets_nothing(files: Path) -> None:
    for args in (["decontaminate", "train.jsonl", "--against", "eval.jsonl", "--json"],
                 ["scan", "graded.jsonl", "--n-perm", "20", "--json"],
                 ["export", "train.jsonl", "-o", "sft.jsonl", "--json"]):
        out, err, code = _cli([*args, "--quiet"], files, tty=False)
        assert code in (0, 1), err
        assert err == "", err
        json.loads(out)
    out, err, _ = _cli(["decontaminate", "train.jsonl", "--against", "eval.jsonl", "--quiet"],
                       files, tty=True)
    assert "decontaminate:" not in err
    assert "30 rows" in out


def test_rows_check_and_export_count_rows_on_a_terminal_and_stay_quiet_on_request(
        files: Path) -> None:
    for args, label in ((["rows", "check", "train.jsonl"], "rows check"),
                        (["rows", "export", "train.jsonl", "-o", "public.jsonl"], "rows export")):
        out, err, code = _cli(args, files, tty=True)
        assert code == 0, out + err
        assert f"\r{label}: 30 rows in " in err
        assert label not in out
        out, err, code = _cli([*args, "--quiet"], files, tty=True)
        assert code == 0
        assert label not in err
