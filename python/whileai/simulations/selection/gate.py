"""The publish gate: stamp calibration on graded rows, refuse RL data that cannot teach anything.

``calibrate`` stamps each graded row's ``calibration``: its task's pass rate over the ``k``
graded repeats, ``k``, a Wilson 95% interval and the policy (``model_version``); a stamp the row
already carries is kept (it was measured on the rows the grader saw, before any pruning).
``publish_gate`` runs it, then refuses RL-shaped rows (repeats of one ask) that are ungraded or
have no mixed ask with ``PublishGateError``, and warns on unanimous, out-of-band and
near-duplicate asks and on reply-length spread. ``calibration_of`` is the schema's typed reader.

>>> rows = [{"task_id": "t", "reward": r} for r in (1.0, 0.0, 1.0, 1.0)]
>>> calibrate(rows)[0]["calibration"]["pass_rate"]
0.75
>>> publish_gate(rows, mode="rl")["ok"]
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whileai.errors import ConfigError, PublishGateError
from whileai.rows.schema import calibration_of
from whileai.rows.source import as_rows, read_reward, task_key
from whileai.simulations.clean.hack_scan import hack_scan
from whileai.simulations.clean.leakage import near_duplicate_prompts
from whileai.simulations.measure.stats import wilson_interval
from whileai.simulations.selection.hygiene import (
    DEFAULT_BAND,
    PASS_AT,
    check_band,
    group_rows,
    group_signal,
    length_report,
)

__all__ = ["calibrate", "calibration_of", "publish_gate"]

_MODES = ("rl", "sft", "auto")


def _mean_kl(group: Sequence[dict[str, Any]], ref: str) -> float | None:
    values = []
    for row in group:
        lp, rp, n = row.get("logprob"), row.get(ref), row.get("n_tokens")
        if not (isinstance(lp, (int, float)) and isinstance(rp, (int, float))):
            continue
        if isinstance(n, int) and n > 0:
            values.append((float(lp) - float(rp)) / n)
    return round(sum(values) / len(values), 6) if values else None


def calibrate(
    rows: Any, *, ref: str | None = None, overwrite: bool = False
) -> list[dict[str, Any]]:
    """Return copies of the rows with a ``calibration`` stamp on every graded row.

    Args:
        rows: graded rows (list, run, or JSONL path).
        ref: a row key holding a reference model's summed logprob; adds ``mean_kl`` (per task,
            the mean of ``(logprob - ref) / n_tokens``).
        overwrite: re-measure rows that already carry a stamp.
    """
    items = as_rows(rows)
    stamps: dict[str, dict[str, Any] | None] = {}
    for key, group in group_rows(items).items():
        graded = [v for v in (read_reward(r)[0] for r in group) if v is not None]
        k, passes = len(graded), sum(v >= PASS_AT for v in graded)
        stamp: dict[str, Any] | None = None
        if k:
            lo, hi = wilson_interval(passes, k)
            stamp = {"pass_rate": round(passes / k, 6), "k": k,
                     "ci95": [round(lo, 6), round(hi, 6)]}
            if ref is not None:
                stamp["mean_kl"] = _mean_kl(group, ref)
        stamps[key] = stamp
    out: list[dict[str, Any]] = []
    for row in items:
        stamp = stamps[task_key(row) or ""]
        carried = bool(row.get("calibration")) and not overwrite
        if carried and stamp is not None and ref is not None:
            out.append({**row, "calibration": {**row["calibration"], "mean_kl": stamp["mean_kl"]}})
            continue
        if stamp is None or read_reward(row)[0] is None or carried:
            out.append(row)
            continue
        policy = row.get("model_version")
        policy = policy if isinstance(policy, str) else None
        out.append({**row, "calibration": {**stamp, "policy": policy}})
    return out


def _rl_shaped(groups: dict[str, list[dict[str, Any]]]) -> bool:
    return any(len(g) >= 2 for g in groups.values())


def publish_gate(
    rows: Any,
    *,
    mode: str = "auto",
    endorsed: Sequence[str] | None = None,
    strict_hacks: bool = False,
    band: tuple[float, float] = DEFAULT_BAND,
    near_duplicates: float = 0.9,
    progress: bool = True,
) -> dict[str, Any]:
    """Check rows before they are published; stamp ``calibration`` on them in place.

    Returns the gate report: ``ok``, ``mode``, counts, ``signal``, ``hack_scan`` (RL),
    ``near_duplicates``, ``length`` and ``warnings``. ``progress`` shows the hack scan's
    progress on stderr (False silences it).

    Raises:
        PublishGateError: RL-shaped rows are ungraded or no ask is mixed (nothing to learn), or
            ``strict_hacks`` and the hack scan says ``reward_hack``.
        ConfigError: an unknown ``mode``, or a malformed ``band``.
    """
    if mode not in _MODES:
        raise ConfigError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
    lo, hi = check_band(band)
    originals = as_rows(rows)
    stamped = calibrate(originals)
    for original, new in zip(originals, stamped, strict=True):
        if "calibration" in new and original.get("calibration") is None:
            original["calibration"] = new["calibration"]
    groups = group_rows(stamped)
    rl = mode == "rl" or (mode == "auto" and _rl_shaped(groups))
    signal = group_signal(stamped)
    graded = sum(read_reward(r)[0] is not None for r in stamped)
    report: dict[str, Any] = {
        "ok": True, "mode": "rl" if rl else "sft", "rows": len(stamped), "graded": graded,
        "stamped": sum("calibration" in r for r in stamped), "signal": signal,
        "warnings": [], "hack_scan": None,
    }
    warnings: list[str] = report["warnings"]
    if rl:
        if graded == 0:
            raise PublishGateError(
                f"publish gate: {len(stamped)} RL-shaped rows and none is graded; grade them "
                "(data.grade / run_judge) before publishing, or pass gate=False"
            )
        if signal["mixed_asks"] == 0:
            raise PublishGateError(
                f"publish gate: none of {signal['asks']} asks has both passing and failing "
                f"rollouts ({signal['all_pass']} all pass, {signal['all_fail']} all fail): a "
                "grouped update learns nothing; add harder or easier asks, or publish them as SFT "
                "data (mode='sft' on data.push / push_rows / push_file, --mode sft on "
                "whileai push)"
            )
        if graded < len(stamped):
            warnings.append(
                f"{len(stamped) - graded} of {len(stamped)} rows have no usable reward and carry "
                "no calibration stamp; grade them or drop them before training"
            )
        if signal["all_pass"] or signal["all_fail"]:
            warnings.append(
                f"{signal['all_pass'] + signal['all_fail']} unanimous asks carry no gradient; "
                "zps.optimize(rows, mode='rl') prunes them"
            )
        out_of_band = 0
        for group in groups.values():
            cal = calibration_of(group[0]) if group[0].get("calibration") else None
            if cal is not None and cal.pass_rate is not None and not lo <= cal.pass_rate <= hi:
                out_of_band += 1
        if out_of_band:
            warnings.append(f"{out_of_band} asks lie outside the pass-rate band [{lo}, {hi}]")

        scan = hack_scan(stamped, endorsed=endorsed, progress=progress)
        report["hack_scan"] = {k: scan[k] for k in ("regime", "top_feature", "tau", "warnings")}
        if scan["regime"] == "reward_hack":
            if strict_hacks:
                raise PublishGateError(
                    f"publish gate: the hack scan says reward_hack ({scan['top_feature']}); fix "
                    "the judge or pass strict_hacks=False"
                )
            warnings.extend(scan["warnings"])

    dupes = near_duplicate_prompts(stamped, threshold=near_duplicates)
    if dupes["n_pairs"]:
        warnings.append(f"{dupes['n_pairs']} pairs of different asks are near duplicates "
                        f"(token Jaccard >= {near_duplicates})")
    report["near_duplicates"] = dupes["n_pairs"]
    lengths = length_report(stamped)
    report["length"] = {k: lengths.get(k) for k in ("median", "max", "spread")}
    warnings.extend(lengths.get("warnings", []))
    return report
