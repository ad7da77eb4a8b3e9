"""A coding agent with bad habits, streamed turn by turn to a local ``whileai serve``.

Starts the platform on 127.0.0.1 with a temp folder, mints a key, plays five habits on three
coding tasks against real tests, sends every turn as OTLP spans while it happens and the judge's
verdict as a score when the episode ends, then reads the traces, scores and cuts back.

Run from this folder: ``python run.py`` (``--keep`` leaves the server up to look at its pages).
Offline; needs the ``server`` extra. A few seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from coder import HABITS, episode
from judge import judge
from otlp import ident, post, root_span, turn_spans
from tasks import TASKS, test_file

import whileai.simulations as zps

AGENT = "coder-bot"
MODEL = "scripted-coder-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def local_server(folder: Path) -> Iterator[tuple[str, str]]:
    """``whileai serve`` on a free loopback port with data in ``folder``: ``(url, key)``."""
    env = {k: v for k, v in os.environ.items() if k not in ("WHILEAI_DATABASE_URL",
                                                             "WHILEAI_API_KEY")}
    serve = [sys.executable, "-m", "whileai", "serve", "--dir", str(folder / "server")]
    key = subprocess.run([*serve, "--create-key", "recipes"], env=env, capture_output=True,
                         text=True, check=True, timeout=120).stdout.strip()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(folder / "server.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen([*serve, "--port", str(port)], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((folder / "server.log").read_text()[-2000:])
            with contextlib.suppress(urllib.error.URLError, ConnectionError), \
                    urllib.request.urlopen(f"{url}/health", timeout=2):
                break
            time.sleep(0.1)
        yield url, key
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def play(url: str, key: str, work: Path) -> list[dict]:
    """Every habit on every task; each turn is POSTed as it happens. One result per episode."""
    results = []
    for task in TASKS:
        for habit in HABITS:
            folder = work / f"{task['id']}-{habit}"
            folder.mkdir()
            (folder / "solution.py").write_text(
                "def todo(*args):\n    raise NotImplementedError\n", encoding="utf-8")
            (folder / "test_solution.py").write_text(test_file(task["visible"]),
                                                     encoding="utf-8")
            trace_id = ident(task["id"], habit, length=32)
            root = root_span(trace_id, AGENT, f"task-{task['id']}")
            spans_sent = rejected = 0
            reply = ""
            steps: list[str] = []
            for turn in episode(habit, task, folder):
                spans = turn_spans(trace_id, root["spanId"], turn["turn"],
                                   ask=task["ask"] if turn["turn"] == 0 else None,
                                   text=turn["text"], call=turn["call"],
                                   result=turn["result"], model=MODEL)
                answer = post(url, key, spans, AGENT)
                spans_sent += len(spans)
                rejected += int(answer.get("partialSuccess", {}).get("rejectedSpans", 0))
                if turn["call"]:
                    steps.append(turn["call"]["tool"])
                reply = turn["text"]
            answer = post(url, key, [root], AGENT)
            spans_sent += 1
            rejected += int(answer.get("partialSuccess", {}).get("rejectedSpans", 0))
            verdict = judge(task, folder, reply)
            zps.send_score(trace_id, verdict["score"], api_key=key, base_url=url,
                           reason=verdict["reason"])
            zps.send_score(trace_id, float(verdict["claimed"]), name="claimed_pass",
                           api_key=key, base_url=url)
            results.append({"task": task["id"], "habit": habit, "trace_id": trace_id,
                            "spans": spans_sent, "rejected": rejected, "steps": steps, **verdict})
    return results


def report(results: list[dict], url: str, key: str) -> None:
    print(f"{'task':<9} {'habit':<14} {'tools':<20} {'its tests':<19} {'real tests':<19} "
          f"{'claimed':<7} score")
    for r in results:
        tools = ",".join(s.replace("_file", "").replace("_tests", "") for s in r["steps"])
        print(f"{r['task']:<9} {r['habit']:<14} {tools:<20} {r['visible']:<19} "
              f"{r['real']:<19} {'yes' if r['claimed'] else 'no':<7} {r['score']:.0f}")
    print()
    print(f"{'habit':<14} claimed  judged  why")
    for habit in HABITS:
        mine = [r for r in results if r["habit"] == habit]
        claimed = sum(r["claimed"] for r in mine) / len(mine)
        judged = sum(r["score"] for r in mine) / len(mine)
        print(f"{habit:<14} {claimed:7.2f}  {judged:6.2f}  {mine[0]['reason']}")

    print("\n== on the platform")
    listed = zps.list_traces(agent=AGENT, api_key=key, base_url=url)
    spans = sum(r["spans"] for r in results)
    rejected = sum(r["rejected"] for r in results)
    print(f"traces {listed['total']} (GenAI {listed['genai']}), spans sent {spans}, "
          f"rejected {rejected}")
    scored = sorted(listed["traces"], key=lambda t: (t["scenario"], t["traceId"]))
    both = sum(set(t["scores"]) == {"score", "claimed_pass"} for t in scored)
    print(f"traces with a verdict and a claim: {both}")
    row = next(t for t in scored if t["traceId"] == results[1]["trace_id"])
    print(f"one trace: {row['agent']}, scenario {row['scenario']}, model {row['model']}")
    print(f"  prompt {row['prompt'][:60]}...")
    print(f"  scores {dict(sorted(row['scores'].items()))}")
    print(zps.format_cuts(zps.cuts(agent=AGENT, api_key=key, base_url=url), AGENT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true",
                        help="leave the server running (Ctrl-C stops it); default: stop")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agent-behavior-") as tmp:
        work = Path(tmp)
        with local_server(work) as (url, key):
            results = play(url, key, work)
            report(results, url, key)
            if args.keep:
                print(f"\nserver {url}, key {key} (Ctrl-C to stop)")
                with contextlib.suppress(KeyboardInterrupt):
                    while True:
                        time.sleep(1)


if __name__ == "__main__":
    main()
