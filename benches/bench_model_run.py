"""Bench model-backed runs against the concurrency limit: rows/s of ``simulate`` with a model agent.

A local OpenAI-compatible stub runs in its own process (asyncio, HTTP/1.1 keep-alive) and answers
every chat completion after ``--latency`` seconds (200 ms): a ``get_order`` call, then an
``update_address`` call, then the final reply, so each rollout makes 3 completions. With
``concurrency = C`` the run can at best keep C rollouts in flight all the time, so the limit is
``C / (3 * latency)`` rows/s; the bench prints the share of it the run reached, beside the CPU
seconds of the run's process and the stub's, and the machine's yardstick.

Prints ``name,size,python_s,rust_s,speedup,rows_per_s,limit_rows_per_s,share,note``; the model
calls are the same work on both backends, so only the native run is timed (``python_s`` empty)
unless ``--pure`` is given.

    .venv/bin/python benches/bench_model_run.py [--concurrency 32,128] [--waves 8]
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _bench import cpu_seconds_of, parser, yardstick_ms  # noqa: E402

_TOOL_ORDER = ("get_order", "update_address")  # then the final reply: 3 completions


def _answer(body: dict[str, object]) -> dict[str, object]:
    """The stub's completion for a request: the next tool call, or the final reply."""
    messages = body.get("messages")
    done = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool") \
        if isinstance(messages, list) else 0
    message: dict[str, object] = {"role": "assistant", "content": None}
    if done < len(_TOOL_ORDER):
        args = {"order_id": "4412"} if done == 0 else {"order_id": "4412", "address": "1 Main St"}
        message["tool_calls"] = [{"id": f"call_{done}", "type": "function", "function": {
            "name": _TOOL_ORDER[done], "arguments": json.dumps(args)}}]
        finish = "tool_calls"
    else:
        message["content"] = "Order 4412 is on its way to the new address."
        finish = "stop"
    return {"id": "cmpl", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}}


async def _client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                  latency: float, seen: dict[str, float]) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            raw = await reader.readexactly(length) if length else b"{}"
            path = head.split(b" ", 2)[1]
            if path.endswith(b"/models"):
                body: dict[str, object] = {"object": "list", "data": [{"id": "stub"}]}
            elif path.endswith(b"/stats"):  # the bench's own question; the books start again
                body = dict(seen)
                seen.clear()
            else:
                seen.setdefault("first", time.time())
                await asyncio.sleep(latency)
                body = _answer(json.loads(raw))
                seen["last"] = time.time()
            data = json.dumps(body).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        pass  # the client hung up, or the stub is shutting down with the connection open
    finally:
        writer.close()


def stub(latency: float) -> None:
    """Serve on a free loopback port; print the port; stop when stdin closes (subprocess side)."""
    seen: dict[str, float] = {}  # wall clock of the first request and the last answer

    async def main() -> None:
        server = await asyncio.start_server(
            lambda r, w: _client(r, w, latency, seen), "127.0.0.1", 0, backlog=1024)
        print(server.sockets[0].getsockname()[1], flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)
        server.close()

    asyncio.run(main())


def worker(url: str, concurrency: int, budget: int) -> None:
    """One run; print ``seconds,cpu_seconds,rows,calls,began,ended`` (subprocess side)."""
    import engine_specs
    import whileai.simulations as zps

    cpu, start, began = time.process_time(), time.perf_counter(), time.time()
    data = zps.simulate(agent=f"vllm:stub@{url}", simulator=False,
                        tools=engine_specs.ORDERS_TOOLS, system_prompt=engine_specs.ORDERS_POLICY,
                        budget=budget, progress=False,
                        advanced={"concurrency": concurrency, "avg_turns": 2})
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    calls = sum(r.get("model_calls", 0) for r in data.trajectories)
    print(f"{seconds},{cpu},{len(data)},{calls},{began},{time.time()}")


@dataclass(frozen=True)
class Run:
    """One run's figures; ``startup`` and ``tail`` are the seconds before the stub's first
    request and after its last answer, ``span`` the seconds in between."""

    seconds: float
    cpu: float
    calls: int
    startup: float
    span: float
    tail: float


def _stub_stats(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url + "/stats", timeout=10) as resp:
        return dict(json.loads(resp.read()))


def timed(url: str, concurrency: int, budget: int, *, pure: bool) -> Run:
    """One run in a fresh process."""
    env = dict(os.environ)
    env.pop("WHILEAI_PURE", None)
    if pure:
        env["WHILEAI_PURE"] = "1"
    for var in ("WHILEAI_AGENT", "WHILEAI_SIMULATOR", "WHILEAI_JUDGE"):
        env.pop(var, None)
    out = subprocess.run([sys.executable, __file__, "--worker", url, str(concurrency),
                          str(budget)], capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    seconds, cpu, rows, calls, began, ended = out.stdout.strip().split(",")
    if int(rows) != budget:
        raise SystemExit(f"concurrency {concurrency}: got {rows} rows of {budget}")
    seen = _stub_stats(url)
    return Run(seconds=float(seconds), cpu=float(cpu), calls=int(calls),
               startup=seen["first"] - float(began), span=seen["last"] - seen["first"],
               tail=float(ended) - seen["last"])


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--concurrency", default="32,128", help="comma-separated limits to run")
    p.add_argument("--waves", type=int, default=8, help="rows per run = waves * concurrency")
    p.add_argument("--latency", type=float, default=0.2, help="seconds per stub completion")
    p.add_argument("--pure", action="store_true", help="also time WHILEAI_PURE=1")
    p.add_argument("--worker", nargs=3, help=argparse_hidden())
    p.add_argument("--stub", type=float, help=argparse_hidden())
    args = p.parse_args()
    if args.stub is not None:
        stub(args.stub)
        return
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        return
    waves = 2 if args.quick else args.waves
    server = subprocess.Popen([sys.executable, __file__, "--stub", str(args.latency)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        print(f"# yardstick {yardstick_ms():.1f} ms, load {os.getloadavg()[0]:.2f}", flush=True)
        print("name,size,python_s,rust_s,speedup,rows_per_s,limit_rows_per_s,share,note")
        for concurrency in (int(c) for c in args.concurrency.split(",")):
            budget = waves * concurrency
            python_s = None
            if args.pure:
                python_s = min(timed(url, concurrency, budget, pure=True).seconds
                               for _ in range(args.repeats))
            best: Run | None = None
            stub_cpu = 0.0
            for _ in range(args.repeats):
                before = cpu_seconds_of(server.pid)
                run = timed(url, concurrency, budget, pure=False)
                if best is None or run.seconds < best.seconds:
                    best, stub_cpu = run, cpu_seconds_of(server.pid) - before
            assert best is not None
            per_rollout = best.calls / budget
            limit = concurrency / (per_rollout * args.latency)
            rate = budget / best.seconds
            py = "" if python_s is None else f"{python_s:.3f}"
            speed = "" if python_s is None else f"{python_s / best.seconds:.2f}"
            print(f"model_run_c{concurrency},{budget},{py},{best.seconds:.3f},{speed},{rate:.1f},"
                  f"{limit:.1f},{rate / limit:.3f},cpu {best.cpu:.2f}s stub_cpu {stub_cpu:.2f}s "
                  f"startup {best.startup:.3f}s span {best.span:.3f}s tail {best.tail:.3f}s "
                  f"calls/rollout {per_rollout:.2f} load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
