"""``CodeExec``: run the candidate program against hidden tests in a sandbox; score the share
that pass, with the verdict computed where the candidate cannot reach it.

Two processes, each in its own sandbox (:mod:`~whileai.simulations.judge.verify.sandbox`: Linux
namespaces through ``bwrap`` or ``unshare``; no network, no host files but the interpreter, a
private ``/tmp``, no view of other processes, an unprivileged user, resource limits):

- the **candidate** process loads the solution (the last fenced code block of ``final_text``, or
  all of it) and then only answers requests: call this function, read that attribute. Answers
  are plain values (numbers, strings, lists, tuples, sets, dicts of those) or handles to objects
  that stay in the candidate process;
- the **test** process holds the hidden tests (read from a pipe; they are never a file either
  process can open), runs each snippet, and every ``test_*`` function a snippet defines, against
  proxies of the candidate's names, and writes the verdict with a nonce to a pipe only it holds.

So printing, exiting early, writing ``result.json``, or returning an object whose ``__eq__``
always says yes cannot forge a pass: ``==`` runs on rebuilt builtins in the test process. The
parent checks the verdict's shape (a nonce, a list of ``[bool, str]``, one entry per test at
least) and scores ``passed / tests``; a timeout, a crash or a solution that does not load scores 0
with the reason. The whole process tree of both sides is killed when the check ends.

With no working sandbox the check refuses to run (``SandboxError``) unless you pass
``unsafe_no_sandbox=True`` (limits only; the code can then read your files and environment).

>>> CodeExec(["assert add(2, 2) == 4"])({"final_text": "def add(a, b):\\n    return a + b"})[
...     "reward"]
1.0
"""

from __future__ import annotations

import json
import os
import re
import secrets
import select
import tempfile
import time
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.judge.verify.base import Verifier
from whileai.simulations.judge.verify.sandbox import Sandbox, find_sandbox, kill_tree

__all__ = ["CodeExec", "extract_code"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)
_MAX_VERDICT = 4 * 2**20


def extract_code(text: str) -> str:
    """The last fenced code block (python, py or unlabelled), else the whole text.

    >>> extract_code("Here:\\n```python\\nx = 1\\n```\\n")
    'x = 1\\n'
    """
    blocks = [body for lang, body in _FENCE.findall(text) if lang.lower() in ("", "python", "py")]
    return blocks[-1] if blocks else text


class CodeExec(Verifier):
    """Run the reply's code against hidden tests (``tests=`` or the row's gold) in a sandbox;
    reward = share of tests passed.

    Args:
        tests: a snippet or list of snippets (``assert`` lines, or ``def test_...():``
            functions, which are collected and called); ``None`` reads them from the gold (a
            string, a list, or a dict with ``"tests"``).
        timeout: wall-clock seconds for the whole check (both processes).
        memory_mb, file_size_mb, max_processes: address-space, file-size and process limits.
        max_output: captured output characters kept for the reason.
        sandbox: ``"auto"`` (``bwrap``, else ``unshare``), ``"bwrap"`` or ``"unshare"``.
        unsafe_no_sandbox: run without isolation when no sandbox works here (limits only).

    Raises:
        SandboxError: no sandbox works on this host and ``unsafe_no_sandbox`` is not set.
    """

    def __init__(
        self,
        tests: str | list[str] | None = None,
        *,
        field: str | None = None,
        timeout: float = 10.0,
        memory_mb: int = 512,
        file_size_mb: int = 8,
        max_processes: int = 32,
        max_output: int = 2000,
        sandbox: str = "auto",
        unsafe_no_sandbox: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(field=field, name=name)
        if timeout <= 0 or memory_mb < 32 or file_size_mb < 1 or max_processes < 1:
            raise ConfigError("CodeExec needs timeout > 0, memory_mb >= 32, file_size_mb >= 1 "
                              "and max_processes >= 1")
        self.tests, self.timeout = tests, timeout
        self.memory, self.fsize = memory_mb * 2**20, file_size_mb * 2**20
        self.max_processes, self.max_output = max_processes, max_output
        self.needs_gold = tests is None
        self.sandbox: Sandbox = find_sandbox(sandbox, unsafe_no_sandbox=unsafe_no_sandbox)

    def _tests(self, gold: Any) -> list[str] | None:
        source = self.tests if self.tests is not None else gold
        if isinstance(source, dict):
            source = source.get("tests")
        if isinstance(source, str):
            return [source]
        if isinstance(source, list) and all(isinstance(t, str) for t in source) and source:
            return list(source)
        return None

    def _limits(self) -> dict[str, int]:
        return {"RLIMIT_CPU": max(1, int(self.timeout) + 1), "RLIMIT_AS": self.memory,
                "RLIMIT_FSIZE": self.fsize, "RLIMIT_CORE": 0, "RLIMIT_NOFILE": 64,
                "RLIMIT_NPROC": self.max_processes}

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        tests = self._tests(gold)
        if tests is None:
            return None, "CodeExec: tests must be a string or a non-empty list of strings"
        nonce = secrets.token_hex(16)
        with tempfile.TemporaryDirectory(prefix="whileai-code-") as tmp:
            verdict, timed_out, tails = self._run(tmp, extract_code(candidate), tests, nonce)
        if timed_out:
            return 0.0, f"timed out after {self.timeout:g}s (killed)"
        return _score(verdict, nonce, len(tests), tails)

    def _run(self, tmp: str, code: str, tests: list[str], nonce: str) -> tuple[
            bytes, bool, tuple[str, str]]:
        deadline = time.monotonic() + self.timeout
        limits = self._limits()
        req_r, req_w = os.pipe()  # test process -> candidate
        resp_r, resp_w = os.pipe()  # candidate -> test process
        verdict_r, verdict_w = os.pipe()  # test process -> us
        procs = []
        with tempfile.TemporaryFile() as code_in, tempfile.TemporaryFile() as tests_in, open(
            Path(tmp) / "candidate.out", "wb"
        ) as cand_out, open(Path(tmp) / "tests.out", "wb") as tests_out:
            code_in.write(code.encode("utf-8", "replace"))
            tests_in.write(json.dumps({"tests": tests, "nonce": nonce}).encode())
            code_in.seek(0)
            tests_in.seek(0)
            try:
                procs.append(self.sandbox.spawn(
                    "candidate", limits=limits, stdin=code_in, output=cand_out,
                    fds={"in": req_r, "out": resp_w}, workdir=tmp))
                procs.append(self.sandbox.spawn(
                    "tests", limits=limits, stdin=tests_in, output=tests_out,
                    fds={"in": resp_r, "out": req_w, "verdict": verdict_w}, workdir=tmp))
            finally:
                for fd in (req_r, req_w, resp_r, resp_w, verdict_w):
                    os.close(fd)
                if len(procs) < 2:
                    os.close(verdict_r)
                    for proc in procs:
                        kill_tree(proc)
            try:
                verdict, timed_out = _read_until(verdict_r, deadline)
            finally:
                os.close(verdict_r)
                for proc in procs:
                    kill_tree(proc)
        tails = tuple(_tail(Path(tmp) / name, self.max_output)
                      for name in ("candidate.out", "tests.out"))
        return verdict, timed_out, (tails[0], tails[1])


def _read_until(fd: int, deadline: float) -> tuple[bytes, bool]:
    """Everything written to ``fd`` until its writer closes it; ``timed_out`` at the deadline."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks), False
        size += len(chunk)
        if size > _MAX_VERDICT:
            return b"", False
        chunks.append(chunk)


def _tail(path: Path, limit: int) -> str:
    try:
        data = path.read_bytes()[:limit]
    except OSError:
        return ""
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:200] if lines else ""


def _score(raw: bytes, nonce: str, n_tests: int, tails: tuple[str, str]) -> tuple[float, str]:
    """Check the verdict's shape and score it; anything malformed is a 0 with the reason."""
    try:
        verdict = json.loads(raw) if raw else None
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict) or verdict.get("nonce") != nonce:
        detail = tails[1] or tails[0]
        return 0.0, "crashed before reporting a verdict (CPU/memory limit?)" + (
            f" {detail}" if detail else "")
    if "load_error" in verdict:
        detail = str(verdict["load_error"])[:300]
        if "exited" in detail and tails[0]:
            detail += f"; output: {tails[0]}"
        return 0.0, f"solution did not load: {detail}"
    results = verdict.get("results")
    if not isinstance(results, list) or len(results) < n_tests or not all(
        isinstance(r, list) and len(r) == 2 and type(r[0]) is bool and isinstance(r[1], str)
        for r in results
    ):
        return 0.0, "the test process reported a malformed verdict"
    passed = sum(1 for ok, _ in results if ok is True)
    first = next((msg for ok, msg in results if not ok), "")
    reason = f"{passed}/{len(results)} tests passed" + (
        f"; first failure: {first}" if first else "")
    return passed / len(results), reason
