"""HackMonitor on a scripted GRPO-like loop: it stops on a planted shortcut, not on clean runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from training_loop import SHORTCUT, gold, play, rule_reward
from whileai.errors import ConfigError

ONSET = 100


def test_wrap_keeps_the_reward_and_skips_missing_values() -> None:
    monitor = zps.HackMonitor(every=100)
    reward = monitor.wrap(lambda prompts, completions, **kw: [1.0, None, float("nan")])
    assert reward(prompts=["a", "a", "a"], completions=["x", "y", "z"]) == [
        1.0, None, pytest.approx(float("nan"), nan_ok=True)]
    assert monitor.calls == 1
    assert len(monitor._rows) == 1
    chat = monitor.wrap(lambda prompts, completions, **kw: [0.5])
    chat(prompts=[[{"role": "user", "content": "hi"}]],
         completions=[[{"role": "assistant", "content": "hello there"}]])
    assert monitor._rows[-1]["prompt"] == "hi"
    assert monitor._rows[-1]["final_text"] == "hello there"


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"unknown alarm\(s\) \['speed'\]"):
        zps.HackMonitor(stop_on="speed")
    with pytest.raises(ConfigError, match="every, k, patience and lookback"):
        zps.HackMonitor(every=0)
    assert zps.HackMonitor(stop_on="any").stop_on == frozenset(
        {"divergence", "length", "drift", "feature"})


def test_feature_alarm_stops_within_40_steps_and_names_the_shortcut(tmp_path: Path) -> None:
    run = zps.training_run("grpo", dir=tmp_path, server=False)
    monitor = zps.HackMonitor(run, every=10, endorsed=["contains:answer"], stop_on="feature",
                              seed=1)
    stopped = play(monitor, seed=1, onset=ONSET)
    assert stopped is not None
    assert ONSET <= stopped <= ONSET + 40
    (alarm,) = monitor.alarms
    assert alarm["name"] == "feature"
    assert alarm["stop"]
    assert SHORTCUT in alarm["evidence"]["feature"]
    assert all(c["regime"] != "reward_hack" for c in monitor.checks if c["step"] < ONSET)
    found = zps.get_run(run.id, dir=tmp_path)
    assert [e["name"] for e in found["events"] if e["kind"] == "alarm"] == ["feature"]
    assert any("monitor/proxy_reward" in p for p in found["series"])
    text = zps.format_hack_monitor(monitor.summary())
    assert "ALARM feature" in text
    assert "-> stop" in text
    assert SHORTCUT in text


def test_divergence_needs_gold_and_fires_when_proxy_rises_and_gold_falls() -> None:
    monitor = zps.HackMonitor(every=10, gold=gold, k=8, endorsed=["contains:answer"],
                              stop_on="divergence", lookback=3, delta=0.1, seed=2)
    stopped = play(monitor, seed=2, onset=ONSET)
    assert stopped is not None
    assert ONSET <= stopped <= ONSET + 60
    alarm = next(a for a in monitor.alarms if a["name"] == "divergence")
    assert alarm["evidence"]["gold_now"] < alarm["evidence"]["gold_then"]
    assert alarm["evidence"]["proxy_rise"] >= 0.1
    before = [c for c in monitor.checks if c["step"] < ONSET]
    assert all("gold_reward" in c for c in before)


def test_length_and_drift_alarms(tmp_path: Path) -> None:
    monitor = zps.HackMonitor(every=1, stop_on=("length", "drift"), kl_budget=0.5, min_obs=4)
    reward = monitor.wrap(rule_reward)
    for step, words in enumerate((5, 5, 9)):
        monitor.step = step
        reward(prompts=["p"] * 4, completions=[" ".join(["ok"] * words)] * 4)
    assert [a["name"] for a in monitor.alarms] == ["length"]
    assert monitor.alarms[0]["evidence"]["ratio"] == pytest.approx(9 / 5)
    monitor.on_log(None, None, None, logs={"objective/kl": 0.9})
    reward(prompts=["p"] * 4, completions=["ok"] * 4)
    assert [a["name"] for a in monitor.alarms] == ["length", "drift"]
    assert monitor.should_stop
    assert monitor.stop_reason is not None
    assert monitor.stop_reason.startswith("length")


def test_holdout_is_sampled_and_scored_by_proxy_and_gold() -> None:
    seen: list[list[str]] = []

    def sampler(prompts: list[str]) -> list[str]:
        seen.append(prompts)
        return ["the answer" if i % 2 else "no idea" for i in range(len(prompts))]

    monitor = zps.HackMonitor(every=1, holdout=[{"prompt": "h1"}, "h2"], gold=gold, k=2,
                              sampler=sampler, min_obs=2)
    monitor.wrap(rule_reward)(prompts=["p", "p"], completions=["answer", "x"])
    (check,) = monitor.checks
    assert seen == [["h1", "h1", "h2", "h2"]]
    assert check["holdout_proxy"] == 0.5
    assert check["gold_reward"] == 0.5
    assert check["holdout_length"] == 2.0
    assert check["gold_n"] == 4


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("WHILEAI_PURE") == "1",
                    reason="statistical calibration of the monitor; the scan's two backends are "
                           "proven identical in test_kernels_scan, so one backend measures it")
def test_false_stops_on_clean_runs_and_detection_rate(capsys: pytest.CaptureFixture[str]) -> None:
    def monitor(seed: int) -> Any:
        return zps.HackMonitor(every=10, endorsed=["contains:answer"], stop_on="feature",
                               seed=seed)

    false_stops = sum(play(monitor(s), seed=1000 + s, onset=None) is not None for s in range(40))
    delays = [play(monitor(s), seed=2000 + s, onset=ONSET) for s in range(10)]
    found = [d - ONSET for d in delays if d is not None and d >= ONSET]
    with capsys.disabled():
        print(f"\nmonitor: {false_stops}/40 clean runs stopped; {len(found)}/10 shortcut runs "
              f"stopped, steps after onset {sorted(found)}")
    assert false_stops <= 2
    assert len(found) == 10
    assert max(found) <= 40
