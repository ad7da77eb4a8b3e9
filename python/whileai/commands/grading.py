"""``whileai grade`` (a verifier or your judge over a JSONL file) and ``whileai report``."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from whileai.commands.manners import add_quiet, load_checked_rows
from whileai.errors import ConfigError, JudgeError
from whileai.rows.duplicates import drop_duplicates, duplicate_message

VERIFIERS = {
    "exact": "ExactMatch",
    "includes": "Includes",
    "numeric": "Numeric",
    "math": "MathEqual",
    "choice": "MultipleChoice",
    "json": "JSONValid",
    "code": "CodeExec",
}


GRADE_EXAMPLE = """examples:
  whileai grade rows.jsonl --judge examples.judge:no_planted_mistake -o rows.graded.jsonl
  whileai grade rows.jsonl --verifier exact --field answer

Exit 1 when no row could be judged (the reason is printed); exit 2 on bad input."""


def register(sub: Any) -> None:
    """Add ``grade`` and ``report`` to the CLI."""
    grade = sub.add_parser("grade", help="grade rows with a built-in verifier or your judge",
                           epilog=GRADE_EXAMPLE)
    grade.add_argument("rows", help="JSONL rows to grade")
    how = grade.add_mutually_exclusive_group(required=True)
    how.add_argument("--verifier", choices=sorted(VERIFIERS), help="a built-in verifier")
    how.add_argument("--judge", metavar="MODULE:ATTR", help="your judge callable, importable")
    grade.add_argument("--field", help="where the gold answer is (key or dotted path)")
    grade.add_argument("--scale", help="a rating judge's range, e.g. 1,5")
    grade.add_argument("--timeout", type=float, default=120.0, help="seconds per row")
    grade.add_argument("--workers", type=int, default=1, help="rows judged at once")
    grade.add_argument("-o", "--output", help="graded JSONL (default: <rows>.graded.jsonl)")
    add_quiet(grade)
    grade.set_defaults(func=run_grade)
    report = sub.add_parser("report", help="pass@1/pass^k/pass@k with intervals, judge statuses",
                            epilog="example:\n  whileai report rows.graded.jsonl --json")
    report.add_argument("rows", help="graded JSONL rows")
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.add_argument("--seed", type=int, default=0, help="bootstrap seed for the intervals")
    report.add_argument("--html", metavar="FILE", default=None,
                        help="also write a self-contained HTML report with charts to FILE")
    report.set_defaults(func=run_report)


def _load_judge(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"--judge must be module:attr (e.g. my_judges:strict), got {spec!r}")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module: a missing file, a syntax error, a crash
        raise JudgeError(f"--judge {spec}: cannot import {module_name!r} "
                         f"({type(exc).__name__}: {exc})") from None
    finally:
        sys.path.pop(0)
    judge = getattr(module, attr, None)
    if judge is None or not callable(judge):
        raise JudgeError(f"--judge {spec}: {module_name} has no callable {attr!r}")
    return judge


def run_grade(args: argparse.Namespace) -> int:
    """Grade a JSONL file; write the graded rows; print the summary and pass@k."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.simulations import verify
    from whileai.simulations.judge.judging import run_judge

    if args.verifier:
        judge = getattr(verify, VERIFIERS[args.verifier])(field=args.field)
    else:
        judge = _load_judge(args.judge)
    scale = None
    if args.scale:
        try:
            lo, hi = (float(x) for x in args.scale.split(","))
        except ValueError:
            raise ConfigError(f"--scale must be two numbers like 1,5, got {args.scale!r}") from None
        scale = (lo, hi)
    rows = load_checked_rows(args.rows)
    scored = run_judge(
        rows, judge, scale=scale, timeout=args.timeout or None, workers=args.workers,
        progress=not args.quiet,
    )
    output = Path(args.output) if args.output else Path(args.rows).with_suffix(".graded.jsonl")
    scored.save(output)
    print(scored.summary())
    print(scored.pass_at)
    print(f"wrote {len(scored.rows)} rows to {output}")
    unjudged = scored.unjudged()
    if scored.rows and len(unjudged) == len(scored.rows):
        reasons = Counter(str(r.get("reason") or r.get("judge_status") or "?")[:160]
                          for r in unjudged)
        reason, count = reasons.most_common(1)[0]
        print(f"whileai grade: no row could be judged ({len(unjudged)} unjudged); most common "
              f"reason ({count} rows): {reason}", file=sys.stderr)
        return 1
    return 0


def run_report(args: argparse.Namespace) -> int:
    """Print pass@k with intervals and the judge status counts of a graded JSONL file."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.simulations.judge.scored import status_counts
    from whileai.simulations.measure.passat import pass_at

    rows, dropped = drop_duplicates(load_checked_rows(args.rows))
    if dropped:
        warnings.warn(duplicate_message(dropped, args.rows), stacklevel=1)
    result = pass_at(rows, seed=args.seed)
    statuses = status_counts(rows)
    if args.html:
        # imported when the command runs: `whileai --help` loads no area
        from whileai.simulations.report.html import report_html

        report_html(rows, args.html, title=f"whileai report: {args.rows}", seed=args.seed)
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps({"pass_at": result.to_dict(), "judge_status": statuses,
                          "duplicates_dropped": dropped}, indent=2))
        return 0
    print(result)

    def ci(x: Any) -> str:
        return "n/a" if x is None else f"[{x[0]:.2f}, {x[1]:.2f}]"

    print(f"  pass@1 95% CI {ci(result.ci95)}")
    if result.pass_at_k is not None:
        print(f"  pass^{result.k} 95% CI {ci(result.pass_pow_k_ci95)}")
        print(f"  pass@{result.k} 95% CI {ci(result.pass_at_k_ci95)}")
    print("  judge status: " + ", ".join(f"{k} {v}" for k, v in statuses.items() if v))
    for note in result.notes:
        print(f"  note: {note}")
    return 0
