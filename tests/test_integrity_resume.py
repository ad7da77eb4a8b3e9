"""A resumed run is the same run: ``run_fingerprint`` on every row decides (issue #33.2).

Each part of the fingerprint is changed on its own: the re-run with the same ``output=`` is
refused with that part's name and the file is left as it was; ``overwrite=True`` starts it
anew; the unchanged run (with a larger budget) resumes as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from whileai.cli import main
from whileai.errors import ConfigError
from whileai.simulations.generate import grid
from whileai.simulations.generate.writer import TemplateWriter
from whileai.simulations.play import fingerprint

POLICY = "Help customers with their orders."
OTHER_TOOLS = [{"type": "function", "function": {
    "name": "cancel_booking", "description": "Cancel a booking by its id.",
    "parameters": {"type": "object", "properties": {"booking_id": {"type": "string"}},
                   "required": ["booking_id"]}}}]


class _OtherWriter(TemplateWriter):
    """The template writer under another name: another writer as far as a run can tell."""

    name = "other-template"


def _judge(row: dict[str, Any]) -> dict[str, Any]:
    return {"reward": 1.0}


def _knobs(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"tools": TOOLS, "system_prompt": POLICY, "simulator": False,
                            "progress": False, "budget": 4, "mode": "explore"}
    return {**base, **changes}


def _agent(seed: int = 0) -> Any:
    return zps.seeded_agent(TOOLS, seed=seed)


pytestmark = pytest.mark.usefixtures("no_model_roles")


CHANGES: list[tuple[str, dict[str, Any], Any]] = [
    ("tools", {"tools": OTHER_TOOLS}, None),
    ("system prompt", {"system_prompt": "Refuse every refund."}, None),
    ("spec", {"rubric": "Reward only polite answers."}, None),
    ("mode", {"mode": "sft"}, None),
    ("seed", {"advanced": {"seed": 7}}, None),
    ("writer", {"simulator": _OtherWriter()}, None),
    ("agent", {}, 3),
    ("grader", {"grader": _judge}, None),
    ("grid knobs", {"fault_rate": 0.1}, None),
    ("grid knobs", {"dimensions": {"tone": [grid.TONES[0]]}}, None),
]


@pytest.mark.parametrize(("label", "change", "agent_seed"), CHANGES,
                         ids=[f"{c[0]}-{sorted(c[1]) or 'agent'}" for c in CHANGES])
def test_a_changed_part_is_refused_with_its_name(tmp_path: Path, label: str,
                                                 change: dict[str, Any],
                                                 agent_seed: Any) -> None:
    out = tmp_path / "p.jsonl"
    first = zps.simulate(_agent(), output=str(out), **_knobs())
    before = out.read_bytes()
    assert {r["run_fingerprint"]["id"] for r in first.rows} == {
        first.trajectories[0]["run_fingerprint"]["id"]}
    other = _agent(agent_seed or 0)
    with pytest.raises(ConfigError, match=rf"^{label}\b.*differs? from the rows already in "
                                          rf"{out}.*overwrite=True"):
        zps.simulate(other, output=str(out), **_knobs(**change))
    assert out.read_bytes() == before  # nothing played, nothing written
    fresh = zps.simulate(other, output=str(out), overwrite=True, **_knobs(**change))
    assert "resumed_rows" not in fresh.search
    stored = zps.load_rows(out)
    assert len(stored) == len(fresh)
    assert {r["run_fingerprint"]["id"] for r in stored} == {
        fresh.trajectories[0]["run_fingerprint"]["id"]} != {
        first.trajectories[0]["run_fingerprint"]["id"]}


def test_the_package_release_is_part_of_the_identity(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "p.jsonl"
    zps.simulate(_agent(), output=str(out), **_knobs())
    monkeypatch.setattr(fingerprint, "__version__", "999.0.0")
    with pytest.raises(ConfigError, match=r"^package version \('.*' there, '999.0' now\)"):
        zps.simulate(_agent(), output=str(out), **_knobs())


def test_an_unchanged_run_resumes_and_budget_is_not_identity(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    zps.simulate(_agent(), output=str(out), **_knobs())
    again = zps.simulate(_agent(), output=str(out), **_knobs(budget=8))
    assert again.search["resumed_rows"] == 4
    assert len(zps.load_rows(out)) == 8
    one_go = zps.simulate(_agent(), **_knobs(budget=8))
    assert [r["run_fingerprint"] for r in again.rows] == [
        r["run_fingerprint"] for r in one_go.rows]
    assert sorted(r["scenario_id"] for r in again.rows) == sorted(
        r["scenario_id"] for r in one_go.rows)


def test_rows_without_a_fingerprint_are_not_taken_for_this_run(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    zps.simulate(_agent(), output=str(out), **_knobs())
    rows = zps.load_rows(out)
    for row in rows:
        del row["run_fingerprint"]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError, match="no run fingerprint"):
        zps.simulate(_agent(), output=str(out), **_knobs())


def test_fingerprint_parts_are_in_the_row_schema() -> None:
    data = zps.simulate(_agent(), **_knobs(budget=2))
    row = data.rows[0]
    assert zps.row_problems(row) == []
    assert set(row["run_fingerprint"]) == {"id", *fingerprint.LABELS}
    assert "run_fingerprint" in zps.row_schema()["properties"]


def test_cli_names_the_difference_and_overwrite_starts_anew(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    policy, other = tmp_path / "policy.txt", tmp_path / "other.txt"
    policy.write_text(POLICY)
    other.write_text("Refuse every refund.")
    out = tmp_path / "p.jsonl"
    common = ["simulate", "--tools", str(tools), "--budget", "6", "-o", str(out), "--quiet"]
    assert main([*common, "--system-prompt", str(policy)]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    code = main([*common, "--system-prompt", str(other)])
    err = capsys.readouterr().err
    assert code != 0
    assert f"system prompt differs from the rows already in {out}" in err
    assert "--overwrite" in err
    assert out.read_bytes() == before
    assert main([*common, "--system-prompt", str(other), "--overwrite"]) == 0
    assert "6 rows" in capsys.readouterr().out
    assert {json.loads(line)["messages"][0]["content"]
            for line in out.read_text().splitlines()} == {"Refuse every refund."}


def test_rows_check_reports_mixed_fingerprints(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    a = zps.simulate(_agent(), **_knobs(budget=3))
    b = zps.simulate(_agent(), **_knobs(budget=2, system_prompt="Refuse every refund."))
    mixed = tmp_path / "mixed.jsonl"
    zps.write_jsonl(mixed, [*a.rows, *b.rows])
    report = zps.check_rows(str(mixed))
    ids = {a.rows[0]["run_fingerprint"]["id"]: 3, b.rows[0]["run_fingerprint"]["id"]: 2}
    assert report["fingerprints"] == ids
    assert main(["rows", "check", str(mixed)]) in (0, 1)
    assert "mixed run fingerprints: rows of 2 runs" in capsys.readouterr().out
    assert len(zps.check_rows(a.rows)["fingerprints"]) == 1
