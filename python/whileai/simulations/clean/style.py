"""Style markers on the agent's reply, one polarity: 1.0 = clean reply, higher is better.

``no_boilerplate`` (stock sign-offs and filler), ``no_hedging`` (stacked uncertainty),
``no_apology``, ``no_sycophancy`` (flattering openers) and ``answered`` (a non-empty reply of
three or more words). ``style_report`` counts hits per marker, keeps examples, and warns when the
reward pays for a tic (a positive correlation between the tic and reward).

>>> style_markers([{"final_text": "What a great question! I think it shipped."}])[0]["markers"]
{'no_boilerplate': 1.0, 'no_hedging': 0.0, 'no_apology': 1.0, 'no_sycophancy': 0.0, 'answered': 1.0}
"""

from __future__ import annotations

import re
from typing import Any

from whileai.rows.source import as_rows, read_reward
from whileai.simulations.measure.stats import pearson

__all__ = ["STYLE_MARKERS", "TICS", "format_style_report", "style_hits", "style_markers",
           "style_report"]

_I = re.IGNORECASE
TICS: dict[str, re.Pattern[str]] = {
    "boilerplate": re.compile(
        r"don't\s+hesitate\s+to\s+(?:reach\s+out|contact)|anything\s+else\s+(?:at\s+all\s+)?"
        r"(?:that\s+)?I\s+can\s+help|thank\s+you\s+(?:so\s+much\s+)?for\s+your\s+patience|"
        r"have\s+a\s+(?:wonderful|great|nice|lovely)\s+(?:rest\s+of\s+your\s+)?day|"
        r"we\s+(?:truly\s+)?value\s+you|I\s+hope\s+this\s+helps|as\s+an\s+AI\b|"
        r"thank\s+you\s+for\s+choosing|feel\s+free\s+to\s+(?:reach|ask|contact)", _I),
    "hedging": re.compile(
        r"\bI\s+think\b|not\s+(?:entirely|completely|totally|100%)\s+sure|I\s+might\s+be\s+wrong|"
        r"\bperhaps\b|\bpossibly\b|I'm\s+not\s+certain|could\s+be\s+wrong|\bI\s+believe\b|"
        r"\bit\s+seems\b|\bI\s+guess\b", _I),
    "apology": re.compile(
        r"\bI(?:'m|\s+am)\s+(?:so\s+|very\s+|truly\s+)?sorry|\bI\s+(?:sincerely\s+)?apologi[sz]e|"
        r"\bmy\s+apologies\b|\bsorry\s+for\s+the\b", _I),
    "sycophancy": re.compile(
        r"\b(?:what\s+a\s+)?(?:great|excellent|fantastic|wonderful)\s+question\b|"
        r"you(?:'re|\s+are)\s+(?:absolutely|totally|so)\s+right|\bbrilliant\s+idea\b|"
        r"\bI\s+love\s+(?:that|this)\s+question", _I),
}
STYLE_MARKERS = ("no_boilerplate", "no_hedging", "no_apology", "no_sycophancy", "answered")


def _reply(row: dict[str, Any]) -> str:
    text = row.get("final_text")
    return text if isinstance(text, str) else ""


def style_hits(row: dict[str, Any]) -> dict[str, str]:
    """The tics found in the row's reply: ``{tic: matched fragment}``.

    >>> style_hits({"final_text": "Sorry for the delay."})
    {'apology': 'Sorry for the'}
    """
    text = _reply(row)
    return {name: m.group(0) for name, pat in TICS.items() if (m := pat.search(text))}


def _markers(row: dict[str, Any]) -> dict[str, float]:
    hits = style_hits(row)
    out = {f"no_{name}": 0.0 if name in hits else 1.0 for name in TICS}
    out["answered"] = 1.0 if len(_reply(row).split()) >= 3 else 0.0
    return out


def style_markers(rows: Any) -> list[dict[str, Any]]:
    """Return copies of the rows with the five style markers stamped on ``markers``."""
    return [{**r, "markers": {**(r.get("markers") or {}), **_markers(r)}} for r in as_rows(rows)]


def style_report(rows: Any, *, reward: str = "reward", warn_at: float = 0.2) -> dict[str, Any]:
    """Per marker: ``hits`` (rows where it is 0), ``rate``, ``examples``, ``reward_corr``.

    A warning is raised when reward rises with a tic (correlation of the tic's presence with
    reward at or above ``warn_at``, three hits or more).
    """
    items = as_rows(rows)
    report: dict[str, Any] = {"rows": len(items), "markers": {}, "warnings": []}
    per_row = [_markers(r) for r in items]
    hits_of = [style_hits(r) for r in items]
    rewards = [read_reward(r, reward)[0] for r in items]
    graded = [i for i, v in enumerate(rewards) if v is not None]
    for name in STYLE_MARKERS:
        bad = [i for i, m in enumerate(per_row) if m[name] == 0.0]
        tic = name[3:] if name.startswith("no_") else None
        corr = pearson([1.0 if per_row[i][name] == 0.0 else 0.0 for i in graded],
                       [rewards[i] or 0.0 for i in graded])
        report["markers"][name] = {
            "hits": len(bad),
            "rate": round(len(bad) / len(items), 4) if items else 0.0,
            "examples": [
                {"index": i, "scenario_id": items[i].get("scenario_id"),
                 "fragment": hits_of[i].get(tic, "") if tic else _reply(items[i])[:60]}
                for i in bad[:3]
            ],
            "reward_corr": None if corr is None else round(corr, 4),
        }
        if tic and corr is not None and corr >= warn_at and len(bad) >= 3:
            report["warnings"].append(
                f"reward pays for {tic} (corr {corr:+.2f} over {len(graded)} graded rows, "
                f"{len(bad)} hits): a policy trained on it will learn the tic"
            )
    return report


def format_style_report(report: dict[str, Any]) -> str:
    """One line per marker, then the warnings."""
    lines = [f"style: {report['rows']} rows"]
    for name, m in report["markers"].items():
        corr = "" if m["reward_corr"] is None else f", reward corr {m['reward_corr']:+.2f}"
        lines.append(f"  {name}: {m['hits']} hits ({100 * m['rate']:.0f}%){corr}")
    lines.extend(f"  warning: {w}" for w in report["warnings"])
    return "\n".join(lines)
