"""Run every recipe and check what it prints against its README.

Each ``recipes/<stage>/<name>/run.py`` runs in a subprocess with this interpreter, its own folder
as the working directory, a temp ``WHILEAI_HOME`` (and ``HOME``), no credentials in the
environment, and the proxy variables pointing at a closed loopback port, so an HTTP client that
honours them (requests, urllib, huggingface_hub) cannot leave the machine while loopback stays
reachable for the servers a recipe starts; the Hugging Face libraries run in offline mode. A
recipe that times out is killed with everything it started (its own process group). The README's
``## What it prints`` section holds one fenced ``text`` block; every non-empty line of it must
appear, in order, among the stdout lines (trailing whitespace stripped).

Usage::

    python tools/run_recipes.py                 # all recipes
    python tools/run_recipes.py 04-train/grpo   # only those named (stage/name)
    python tools/run_recipes.py --jobs 1        # one at a time (default: one per CPU, <= 4)

Prints one line per recipe (``ok`` or ``FAIL``, its name, seconds) and exits 1 naming each failing
recipe with the first expected line it did not find.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
HEADING = "## What it prints"
TIMEOUT_S = 120.0
# Variables that could carry a credential or point a recipe at a real endpoint.
SCRUBBED = ("WHILEAI_API_KEY", "WHILEAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
            "ANTHROPIC_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "VLLM_API_KEY",
            "WHILEAI_DATABASE_URL")


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What one recipe did: its name, whether it passed, seconds, and why not."""

    name: str
    ok: bool
    seconds: float
    reason: str = ""


def find_recipes(root: Path = RECIPES) -> list[Path]:
    """Every recipe folder (the parent of a ``recipes/*/*/run.py``), sorted by stage then name."""
    return sorted(p.parent for p in root.glob("*/*/run.py"))


def recipe_name(folder: Path) -> str:
    """``stage/name`` of a recipe folder."""
    return f"{folder.parent.name}/{folder.name}"


def expected_lines(readme: str) -> list[str]:
    """The non-empty lines of the fenced ``text`` block under ``## What it prints``.

    Raises:
        ValueError: no such heading, or no fenced ``text`` block right under it.
    """
    lines = readme.splitlines()
    try:
        at = next(i for i, line in enumerate(lines) if line.strip() == HEADING)
    except StopIteration:
        raise ValueError(f"no '{HEADING}' section") from None
    rest = lines[at + 1:]
    start = next((i for i, line in enumerate(rest)
                  if line.strip() == "```text" or line.startswith("#")), None)
    if start is None or rest[start].strip() != "```text":
        raise ValueError(f"no ```text block under '{HEADING}'")
    body = rest[start + 1:]
    end = next((i for i, line in enumerate(body) if line.strip() == "```"), None)
    if end is None:
        raise ValueError(f"the ```text block under '{HEADING}' is not closed")
    return [line.rstrip() for line in body[:end] if line.strip()]


def first_missing(expected: list[str], stdout: str) -> str | None:
    """The first expected line not found (in order) among the stdout lines, or None."""
    got = iter(line.rstrip() for line in stdout.splitlines())
    for want in expected:
        if not any(line == want for line in got):
            return want
    return None


def recipe_env(home: Path) -> dict[str, str]:
    """The environment a recipe runs in: a temp home, no credentials, no network."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    closed = "http://127.0.0.1:9"  # discard port: nothing listens, so any proxied call fails
    env.update({
        "WHILEAI_HOME": str(home), "HOME": str(home),
        "HTTP_PROXY": closed, "HTTPS_PROXY": closed, "http_proxy": closed, "https_proxy": closed,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1",
    })
    return env


def run_one(folder: Path, *, python: str = sys.executable,
            timeout: float = TIMEOUT_S) -> Outcome:
    """Run one recipe's ``run.py`` and check its stdout against its README."""
    name = recipe_name(folder)
    try:
        expected = expected_lines((folder / "README.md").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Outcome(name=name, ok=False, seconds=0.0, reason=f"README.md: {exc}")
    with tempfile.TemporaryDirectory(prefix="whileai-recipe-") as tmp:
        started = time.perf_counter()
        proc = subprocess.Popen([python, "run.py"], cwd=folder, env=recipe_env(Path(tmp)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return Outcome(name=name, ok=False, seconds=time.perf_counter() - started,
                           reason=f"timed out after {timeout:.0f}s")
        seconds = time.perf_counter() - started
    if proc.returncode != 0:
        tail = "\n".join(stderr.strip().splitlines()[-15:])
        return Outcome(name=name, ok=False, seconds=seconds,
                       reason=f"exit status {proc.returncode}\n{tail}")
    missing = first_missing(expected, stdout)
    if missing is not None:
        return Outcome(name=name, ok=False, seconds=seconds,
                       reason=f"first missing line: {missing!r}")
    return Outcome(name=name, ok=True, seconds=seconds)


def main(argv: list[str]) -> int:
    """Run the named recipes (all when none are named); 0 when every one passed."""
    parser = argparse.ArgumentParser(description="Run every recipe and check what it prints.")
    parser.add_argument("names", nargs="*", help="stage/name of the recipes to run (default: all)")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                        help="recipes run at once (default: one per CPU, at most 4)")
    args = parser.parse_args(argv)
    folders = find_recipes()
    if args.names:
        unknown = sorted(set(args.names) - {recipe_name(f) for f in folders})
        if unknown:
            print(f"no such recipe: {', '.join(unknown)}", file=sys.stderr)
            return 2
        folders = [f for f in folders if recipe_name(f) in args.names]
    if not folders:
        print("no recipes found under recipes/*/*/run.py", file=sys.stderr)
        return 1
    started = time.perf_counter()
    outcomes = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for outcome in pool.map(run_one, folders):  # printed in order, as each one's turn comes
            outcomes.append(outcome)
            status = "ok  " if outcome.ok else "FAIL"
            print(f"{status} {outcome.name:<45} {outcome.seconds:6.1f}s", flush=True)
    failed = [o for o in outcomes if not o.ok]
    print(f"{len(outcomes) - len(failed)}/{len(outcomes)} recipes ok in "
          f"{time.perf_counter() - started:.1f}s")
    for outcome in failed:
        print(f"\nFAIL {outcome.name}: {outcome.reason}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
