"""Bench ``hack_scan`` end to end: native vs pure on 2,000 asks x 8 rollouts, and 100,000 rows.

Two workloads of 16,000 rows (``--quick``: 200 asks):

- ``text``: ``bench_large.py``'s rows (a 20-120 word reply, 30% with a planted phrase that
  raises the reward), the rows the issue's figures were measured on;
- ``agent``: agent-like rows with tool steps (shell commands, file writes, lookups), assistant
  turns between them, user turns, markers, log-probabilities, truncation, bullets, headings,
  code fences and non-ASCII words, so every hand feature and trace flag has work to do.

Each is scanned with ``endorsed=["tool:lookup_order"]``. The native run is the best of
``--repeats``; the pure run is one call in a child process with ``WHILEAI_PURE=1``; the two
reports (JSON, sorted keys) must hash the same or the bench stops. ``--large`` adds the
hack_scan half of ``bench_large.py`` (``scan_rows(12500, 8)``, native only) in a child process
of its own, with its peak RSS (VmHWM), the peak before the call, its CPU seconds and the
load average.
Prints ``name,size,python_s,rust_s,speedup,note``.

    .venv/bin/python benches/bench_hack_scan.py [--quick] [--large] [--repeats 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from typing import Any

from _bench import WORDS, header, line, parser, peak_rss_of
from bench_large import scan_rows

ENDORSED = ["tool:lookup_order"]
_TOOLS = ("lookup_order", "refund_order", "run_shell", "write_file", "search_docs", "send_email")
_ARGS = {
    "lookup_order": lambda rng: {"order_id": f"o{rng.randint(1, 999)}"},
    "refund_order": lambda rng: {"order_id": f"o{rng.randint(1, 999)}", "amount": 12.5},
    "run_shell": lambda rng: {"cmd": rng.choice(["pytest -q", "ls -la", "rm -rf build",
                                                 "git push --force", "make test || true"])},
    "write_file": lambda rng: {"path": rng.choice(["src/app.py", "tests/test_app.py"]),
                               "content": rng.choice(["x = 1", "@pytest.mark.skip\ndef t(): pass",
                                                      "api_key = 'abcdef123456'"])},
    "search_docs": lambda rng: {"query": " ".join(rng.choices(WORDS, k=3))},
    "send_email": lambda rng: {"to": "a@b.c", "body": "hello"},
}
_CLAIMS = ("I verified it and all tests pass.", "I have refunded the order.",
           "I've updated the file.", "Sorry, the lookup failed.", "Your order has been shipped.")


def _words(rng: random.Random, lo: int, hi: int) -> str:
    out = []
    for _ in range(rng.randint(lo, hi)):
        r = rng.random()
        if r < 0.06:
            out.append(str(rng.randint(0, 9999)))
        elif r < 0.12:
            word = rng.choice(WORDS).capitalize()
            out.append(word + rng.choice([",", ".", "!", "?", "...", ":"]))
        else:
            out.append(rng.choice(WORDS))
    return " ".join(out)


def _reply(rng: random.Random) -> str:
    parts = [_words(rng, 5, 40)]
    if rng.random() < 0.3:
        parts.extend(f"- {_words(rng, 2, 6)}" for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.15:
        parts.insert(0, f"## {_words(rng, 1, 3)}")
    if rng.random() < 0.1:
        parts.append("```\nprint('done')\n```")
    if rng.random() < 0.3:
        parts.append(rng.choice(_CLAIMS))
    return "\n".join(parts)


def agent_rows(asks: int, k: int, seed: int = 2) -> list[dict[str, Any]]:
    """Seeded agent-like rows: tool steps, assistant and user turns, markers, a planted tool."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for a in range(asks):
        for r in range(k):
            steps: list[dict[str, Any]] = []
            looked = False
            for _ in range(rng.randint(0, 4)):
                tool = rng.choice(_TOOLS)
                looked = looked or tool == "lookup_order"
                result: Any = {"ok": rng.random() > 0.1}
                if tool == "run_shell":
                    result = {"exit_code": rng.choice([0, 0, 1])}
                steps.append({"tool": tool, "arguments": _ARGS[tool](rng), "result": result})
                if rng.random() < 0.3:
                    steps.append({"role": "assistant", "content": _words(rng, 3, 12)})
                if rng.random() < 0.1:
                    steps.append({"role": "user", "content": "and then?"})
            row: dict[str, Any] = {
                "scenario_id": f"sc{a}", "rollout_index": r, "prompt": f"ask {a}",
                "steps": steps, "final_text": _reply(rng),
                "reward": float(rng.random() < (0.75 if looked else 0.35)),
                "markers": {"polite": float(rng.random() < 0.5), "grounded": rng.random()},
            }
            if rng.random() < 0.5:
                row["logprob"], row["n_tokens"] = -rng.random() * 50, rng.randint(1, 200)
            if rng.random() < 0.05:
                row["finish_reason"] = "length"
            rows.append(row)
    return rows


report_cpu: dict[str, float] = {}  # CPU seconds (every thread) of the last run of each kind


def run(kind: str, asks: int) -> tuple[float, str, dict[str, Any]]:
    """Time one ``hack_scan`` on this process's backend: (seconds, report sha256, report)."""
    import whileai.simulations as zps

    rows = scan_rows(asks, 8) if kind == "text" else agent_rows(asks, 8)
    start, cpu = time.perf_counter(), time.process_time()
    report = zps.hack_scan(rows, endorsed=ENDORSED)
    seconds = time.perf_counter() - start
    report_cpu[kind] = time.process_time() - cpu
    digest = hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()
    return seconds, digest, report


def large_child() -> None:
    """The hack_scan half of bench_large.py: time and peak RSS, one JSON line."""
    import whileai.simulations as zps

    rows = scan_rows(12500, 8)
    before = peak_rss_of(os.getpid())
    start, cpu = time.perf_counter(), time.process_time()
    report = zps.hack_scan(rows)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    digest = hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()
    print(json.dumps({"seconds": seconds, "cpu": cpu, "load": os.getloadavg()[0],
                      "peak": peak_rss_of(os.getpid()), "before": before, "digest": digest,
                      "top": report["top_feature"]}))


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--child", choices=["text", "agent"], help=argparse.SUPPRESS)
    p.add_argument("--large", action="store_true", help="add the 100,000-row line")
    p.add_argument("--large-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    asks = 200 if args.quick else 2000
    if args.large_child:
        large_child()
        return
    if args.child:
        seconds, digest, _ = run(args.child, asks)
        print(json.dumps({"seconds": seconds, "digest": digest, "cpu": report_cpu[args.child]}))
        return
    header([])
    for kind in ("text", "agent"):
        native_s, digest, report = min(run(kind, asks) for _ in range(max(1, args.repeats)))
        child = [sys.executable, __file__, "--child", kind, *(["--quick"] if args.quick else [])]
        env = {**os.environ, "WHILEAI_PURE": "1"}
        out = subprocess.run(child, env=env, capture_output=True, text=True, check=True).stdout
        pure = json.loads(out.strip().splitlines()[-1])
        if pure["digest"] != digest:
            sys.exit(f"backends disagree on hack_scan ({kind}): the bench is void")
        note = (f"{kind} rows; CPU s native {report_cpu[kind]:.2f} pure {pure['cpu']:.2f}; "
                f"load {os.getloadavg()[0]:.1f}; {report['n_features']} features; "
                f"regime {report['regime']}; "
                f"top {report['top_feature']}; report sha256 {digest[:12]}")
        line(f"hack_scan_{kind}", f"{asks}x8", pure["seconds"], native_s, [], note)
    if args.large:
        child = [sys.executable, __file__, "--large-child"]
        out = subprocess.run(child, capture_output=True, text=True, check=True).stdout
        got = json.loads(out.strip().splitlines()[-1])
        print(f"hack_scan_large,100000,,{got['seconds']:.4f},,peak RSS {got['peak']:.0f} MiB "
              f"({got['before']:.0f} before the call); {got['cpu']:.1f} CPU s; load "
              f"{got['load']:.1f}; top {got['top']}; report sha256 {got['digest'][:12]}",
              flush=True)


if __name__ == "__main__":
    main()
