"""A bad keyword to a public call raises ``ConfigError``: a ``WhileaiError`` that is still a
``ValueError``, so ``except ValueError`` keeps working. One bad call per argument check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from _tools import TOOLS
from whileai.errors import ConfigError, WhileaiError
from whileai.simulations.measure.passat import pass_at_k_estimate, pass_pow_k_estimate

ROWS = [{"prompt": "hi", "final_text": "hello"}]

Call = Callable[[Path], Any]

CASES: list[Any] = [
    pytest.param(lambda tmp: zps.hack_scan([], alpha=2.0, progress=False),
                 r"alpha must be in \(0, 1\), got 2.0", id="hack_scan-alpha"),
    pytest.param(lambda tmp: zps.trace_flags({"steps": [{"tool": "t"}]}, kinds={"t": "poke"}),
                 r"kinds\['t'\] = 'poke'; use one of", id="trace_flags-kinds"),
    pytest.param(lambda tmp: zps.leakage_report(ROWS, ROWS, threshold=2),
                 r"threshold must be in \[0, 1\], got 2", id="leakage_report-threshold"),
    pytest.param(lambda tmp: zps.leakage_report(ROWS, ROWS, examples=-1),
                 r"examples must be an int >= 0 or None", id="leakage_report-examples"),
    pytest.param(lambda tmp: zps.build_preference_pairs([], margin=-0.5),
                 r"margin must be >= 0, got -0.5", id="build_preference_pairs-margin"),
    pytest.param(lambda tmp: zps.build_preference_pairs([], length_tolerance=2.0),
                 r"length_tolerance must be in \[0, 1\]", id="build_preference_pairs-tolerance"),
    pytest.param(lambda tmp: zps.build_preference_pairs([], pairs_per_task=0),
                 r"pairs_per_task must be >= 1, got 0", id="build_preference_pairs-per-task"),
    pytest.param(lambda tmp: zps.split_pseudo_production([], 1.5),
                 r"fraction must be in \(0, 1\), got 1.5", id="split_pseudo_production-fraction"),
    pytest.param(lambda tmp: pass_at_k_estimate(3, 5, 2),
                 r"need 0 <= c <= n and 1 <= k <= n, got n=3, c=5, k=2", id="pass_at_k-c"),
    pytest.param(lambda tmp: pass_pow_k_estimate(3, 1, 4),
                 r"got n=3, c=1, k=4", id="pass_pow_k-k"),
    pytest.param(lambda tmp: zps.publish_gate([], mode="both", progress=False),
                 r"mode must be one of .*, got 'both'", id="publish_gate-mode"),
    pytest.param(lambda tmp: zps.publish_gate([], band=(0.9, 0.1), progress=False),
                 r"band must satisfy 0 <= low <= high <= 1", id="publish_gate-band"),
    pytest.param(lambda tmp: zps.optimize([], mode="ppo"),  # type: ignore[call-overload]
                 r"mode must be 'rl' or 'sft', got 'ppo'", id="optimize-mode"),
    pytest.param(lambda tmp: zps.optimize([], mode="rl", band="easy"),  # type: ignore[call-overload]
                 r"band must be \(low, high\) pass rates, got 'easy'", id="optimize-band"),
    pytest.param(lambda tmp: zps.select_for_rl([], truncated="trim"),  # type: ignore[arg-type]
                 r"truncated= must be one of .*, got 'trim'", id="select_for_rl-truncated"),
    pytest.param(lambda tmp: zps.select_for_sft([], select="best"),  # type: ignore[arg-type]
                 r"select= must be one of .*, got 'best'", id="select_for_sft-select"),
    pytest.param(lambda tmp: zps.select_for_sft([], select="top_k_overall"),
                 r"select='top_k_overall' needs k= \(an int >= 1\), got None",
                 id="select_for_sft-k"),
    pytest.param(lambda tmp: zps.export_dataset(ROWS, tmp / "sft.jsonl",
                                                max_tool_output_chars=-1, progress=False),
                 r"export_dataset: max_tool_output_chars must be an int >= 0 or None, got -1",
                 id="export_dataset-cap"),
    pytest.param(lambda tmp: zps.export_dataset(ROWS, tmp / "sft.jsonl", format="xml",  # type: ignore[arg-type]
                                                progress=False),
                 r"export_dataset: format='xml' is not supported", id="export_dataset-format"),
    pytest.param(lambda tmp: zps.export_environment(ROWS, tmp / "env", system_prompt="Help.",
                                                    tools=[], holdout=1.5),
                 r"export_environment: holdout must be in \[0, 1\), got 1.5",
                 id="export_environment-holdout"),
    pytest.param(lambda tmp: zps.export_environment(ROWS, tmp / "env", system_prompt="Help.",
                                                    tools=[], band=(0.8, 0.2)),
                 r"band must satisfy 0 <= low <= high <= 1", id="export_environment-band"),
    pytest.param(lambda tmp: zps.send_score("trace-1"),
                 r"send_score needs a value with trace_id", id="send_score-no-value"),
    pytest.param(lambda tmp: zps.send_score(),
                 r"send_score needs trace_id and value, or scores=", id="send_score-nothing"),
]


@pytest.mark.parametrize(("call", "message"), CASES)
def test_a_bad_keyword_is_a_config_error_and_a_value_error(
        call: Call, message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        call(tmp_path)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, WhileaiError)
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


def test_load_environment_with_an_unknown_split_is_a_config_error(tmp_path: Path) -> None:
    pytest.importorskip("verifiers.v1")
    folder = tmp_path / "env"
    with pytest.warns(UserWarning, match="no row carries scenario_dimensions"):
        zps.export_environment(ROWS, folder, system_prompt="Help.", tools=TOOLS,
                               holdout=0.0)
    taskset = zps.load_environment(folder, split="validation")
    with pytest.raises(ConfigError, match=r"split 'validation': this environment has splits"
                       ) as caught:
        list(taskset)
    assert isinstance(caught.value, ValueError)
