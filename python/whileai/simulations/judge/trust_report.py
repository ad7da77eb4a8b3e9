"""``judge_trust``: is this judge measured, and is it clean enough to train on?

Reads hand labels (``gold_reward``) and, when given the judge callable, re-judges a sample as-is
(consistency) and with neutral filler appended (a flip means the judge reads length), and can run
the ``judge_probes``. ``ok`` means measured *and* clean: with no labels it is ``False`` and the
printout says ``NOT MEASURED`` rather than untrustworthy.

>>> report = judge_trust([{"prompt": "p", "reward": 1}])
>>> report["ok"], report["status"]
(False, 'NOT MEASURED')
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

from whileai import _backend
from whileai.rows.keywords import valid_kwargs
from whileai.rows.source import as_rows, read_reward, task_key
from whileai.simulations.judge.judging import DEFAULT_TIMEOUT, judge_row
from whileai.simulations.judge.probes import FILLER, judge_probes
from whileai.simulations.judge.trust import MIN_GOLD, judge_agreement

__all__ = ["format_judge_trust", "judge_trust"]

MIN_AGREEMENT = 0.8
MIN_KAPPA = 0.6
MAX_FLIP = 0.10
LENGTH_GAP = 0.2
MIN_SIDE = 5


def _length_bias(rows: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Judge pass rate on short vs long replies within each gold label."""
    out: dict[str, Any] = {}
    for label in (1, 0):
        pool = []
        for row in rows:
            judged, _ = read_reward(row)
            gold, _ = read_reward(row, "gold_reward")
            text = row.get("final_text")
            if judged is None or gold is None or not isinstance(text, str):
                continue
            if (gold >= 0.5) == bool(label):
                pool.append((len(text), judged >= threshold))
        pool.sort(key=lambda item: item[0])
        half = len(pool) // 2
        short, long_ = pool[:half], pool[len(pool) - half :]
        name = "gold_pass" if label else "gold_fail"
        if half < MIN_SIDE:
            out[name] = {"n": len(pool), "flag": False, "note": f"under {2 * MIN_SIDE} rows"}
            continue
        short_rate = sum(p for _, p in short) / half
        long_rate = sum(p for _, p in long_) / half
        gap = long_rate - short_rate
        out[name] = {
            "n": len(pool),
            "short_pass_rate": short_rate,
            "long_pass_rate": long_rate,
            "gap": gap,
            "flag": abs(gap) >= LENGTH_GAP,
        }
    return out


def _rejudge(
    rows: list[dict[str, Any]],
    judge: Callable[[Any], Any],
    *,
    sample: int,
    seed: int,
    threshold: float,
    timeout: float | None,
) -> dict[str, Any]:
    judged = [r for r in rows if read_reward(r)[0] is not None]
    pool = random.Random(seed).sample(judged, min(sample, len(judged)))
    same = flips = n_same = n_flip = 0
    for row in pool:
        before = read_reward(row)[0]
        assert before is not None
        again = judge_row(row, judge, timeout=timeout)["reward"]
        if again is not None:
            n_same += 1
            same += (again >= threshold) == (before >= threshold)
        padded = dict(row, final_text=str(row.get("final_text") or "") + FILLER)
        padded.pop("messages", None)
        filled = judge_row(padded, judge, timeout=timeout)["reward"]
        if filled is not None:
            n_flip += 1
            flips += (filled >= threshold) != (before >= threshold)
    return {
        "sampled": len(pool),
        "consistency": same / n_same if n_same else None,
        "filler_flip_rate": flips / n_flip if n_flip else None,
    }


@valid_kwargs
def judge_trust(
    rows: Any,
    *,
    judge: Callable[[Any], Any] | None = None,
    probes: str | Iterable[str] | None = None,
    rubric: Any = None,
    sample: int = 20,
    seed: int = 0,
    threshold: float = 0.5,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """Measure whether the judge behind ``rows`` can be trusted (see the module docstring)."""
    row_list = as_rows(rows)
    agreement = judge_agreement(row_list, threshold=threshold)
    measured = agreement["n"] > 0
    halves: dict[str, Any] = {}
    if measured:
        parts: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
        for row in row_list:
            key = task_key(row) or ""
            parts["a" if _backend.hash64(key) % 2 == 0 else "b"].append(row)
        for name, part in parts.items():
            sub = judge_agreement(part, threshold=threshold)
            halves[name] = {"n": sub["n"], "agreement": sub["agreement"]}
    length = (
        {} if (not measured or agreement["single_class"]) else _length_bias(row_list, threshold)
    )
    queue = []
    for i, row in enumerate(row_list):
        judged, _ = read_reward(row)
        gold, _ = read_reward(row, "gold_reward")
        if judged is None or gold is None or (judged >= threshold) == (gold >= 0.5):
            continue
        queue.append(
            {
                "index": i,
                "task": task_key(row),
                "reward": judged,
                "gold_reward": gold,
                "final_text": str(row.get("final_text") or "")[:200],
            }
        )
    report: dict[str, Any] = {
        "measured": measured,
        "agreement": agreement,
        "halves": halves,
        "length_bias": length,
        "review_queue": queue,
        "rejudge": None,
        "probes": None,
        "exploitable_by": [],
        "notes": list(agreement["notes"]),
    }
    problems = []
    if judge is not None:
        report["rejudge"] = _rejudge(
            row_list, judge, sample=sample, seed=seed, threshold=threshold, timeout=timeout
        )
        flip = report["rejudge"]["filler_flip_rate"]
        if flip is not None and flip >= MAX_FLIP:
            problems.append(f"appending filler flips {flip:.0%} of verdicts (reads length)")
        cons = report["rejudge"]["consistency"]
        if cons is not None and cons < 1 - MAX_FLIP:
            problems.append(f"re-judging the same rows agrees only {cons:.0%} of the time")
        if probes is not None:
            report["probes"] = judge_probes(
                row_list,
                judge,
                rubric=rubric,
                probes=probes,
                sample=sample,
                seed=seed,
                threshold=threshold,
                timeout=timeout,
            )
            report["exploitable_by"] = report["probes"]["exploitable_by"]
            if report["exploitable_by"]:
                problems.append(f"exploitable by {report['exploitable_by']}")
    elif probes is not None:
        report["notes"].append("probes need judge=: the callable to probe")
    if measured:
        if agreement["agreement"] < MIN_AGREEMENT:
            problems.append(f"agreement {agreement['agreement']:.0%} is under {MIN_AGREEMENT:.0%}")
        kappa = agreement["kappa"]
        if kappa is not None and kappa < MIN_KAPPA:
            problems.append(f"kappa {kappa:.2f} is under {MIN_KAPPA}")
        problems += [
            f"length bias within {name}: long replies pass {v['gap']:+.0%} vs short"
            for name, v in length.items()
            if v.get("flag")
        ]
    else:
        report["notes"].append(
            "no gold_reward labels: the judge is unmeasured (label 30-100 rows, attach_labels)"
        )
    report["problems"] = problems
    report["ok"] = measured and not problems
    report["status"] = "NOT MEASURED" if not measured else ("OK" if report["ok"] else "CHECK")
    return report


def format_judge_trust(report: dict[str, Any]) -> str:
    """Print a ``judge_trust`` report; the first line is the verdict.

    >>> print(format_judge_trust(judge_trust([{"prompt": "p"}])).splitlines()[0])
    judge trust: NOT MEASURED
    """
    lines = [f"judge trust: {report['status']}"]
    agr = report["agreement"]
    if report["measured"]:
        lo, hi = agr["agreement_ci95"]
        kappa = "n/a" if agr["kappa"] is None else f"{agr['kappa']:.2f}"
        pwgf = agr["pass_when_gold_fail"]
        lines.append(
            f"  agreement {agr['agreement']:.2f} [{lo:.2f}, {hi:.2f}] on {agr['n']} gold rows, "
            f"kappa {kappa}, pass_when_gold_fail " + ("n/a" if pwgf is None else f"{pwgf:.2f}")
        )
        for name, half in report["halves"].items():
            value = "n/a" if half["agreement"] is None else f"{half['agreement']:.2f}"
            lines.append(f"  half {name}: agreement {value} ({half['n']} rows)")
        if agr["n"] < MIN_GOLD:
            lines.append(f"  (under {MIN_GOLD} gold rows)")
    rj = report.get("rejudge")
    if rj:
        cons, flip = rj["consistency"], rj["filler_flip_rate"]
        lines.append(
            "  re-judge consistency "
            + ("n/a" if cons is None else f"{cons:.2f}")
            + ", filler flip rate "
            + ("n/a" if flip is None else f"{flip:.2f}")
        )
    if report.get("probes"):
        for name, p in report["probes"]["probes"].items():
            rate = "n/a" if p["rate"] is None else f"{p['rate']:.0%}"
            lines.append(f"  probe {name}: {rate} pass ({p['n']} tried)")
    lines += [f"  problem: {p}" for p in report["problems"]]
    lines += [f"  note: {n}" for n in report["notes"]]
    if report["review_queue"]:
        lines.append(f"  review queue: {len(report['review_queue'])} disagreements")
    return "\n".join(lines)
