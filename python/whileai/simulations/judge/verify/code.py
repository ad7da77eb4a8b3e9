"""``CodeExec``: run the candidate program against hidden tests in a separate, limited process.

The candidate (the last fenced code block of ``final_text``, or all of it) and the tests (each a
snippet of Python, usually ``assert`` lines, run in the candidate's namespace) are written to a
fresh temporary folder and run by a small runner under ``python -I -B`` (isolated: no user site,
no ``PYTHON*`` variables, no script folder on the path) with a scrubbed environment (``PATH``,
``HOME`` and ``TMPDIR`` inside the folder, nothing else), stdin closed, its own session, and
``resource`` limits set before exec: CPU seconds, address space, file size (which also caps the
captured output), open files, no core dumps. A wall-clock timeout kills the whole process group.
The reward is the share of tests that passed; a timeout, a crash or a solution that does not load
scores 0 with the reason, never a hang.

This contains accidents and runaway programs; it is not a security boundary against code written
to escape (use a container or VM for that).

>>> CodeExec(["assert add(2, 2) == 4"])({"final_text": "def add(a, b):\\n    return a + b"})[
...     "reward"]
1.0
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.judge.verify.base import Verifier

__all__ = ["CodeExec", "extract_code"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)

_RUNNER = r"""
import json, sys
def _out(payload):
    with open("result.json", "w") as fh:
        json.dump(payload, fh)
ns = {"__name__": "solution"}
try:
    with open("solution.py") as fh:
        exec(compile(fh.read(), "solution.py", "exec"), ns)
except BaseException as exc:
    _out({"load_error": (type(exc).__name__ + ": " + str(exc))[:300]})
    sys.exit(0)
with open("tests.json") as fh:
    tests = json.load(fh)
results = []
for i, test in enumerate(tests):
    try:
        exec(compile(test, "test_%d" % i, "exec"), ns)
        results.append([True, ""])
    except BaseException as exc:
        results.append([False, (type(exc).__name__ + ": " + str(exc))[:300]])
_out({"results": results})
"""


def extract_code(text: str) -> str:
    """The last fenced code block (python, py or unlabelled), else the whole text.

    >>> extract_code("Here:\\n```python\\nx = 1\\n```\\n")
    'x = 1\\n'
    """
    blocks = [body for lang, body in _FENCE.findall(text) if lang.lower() in ("", "python", "py")]
    return blocks[-1] if blocks else text


def _limits(cpu: int, memory: int, fsize: int) -> Any:
    def apply() -> None:
        import resource

        for limit, value in (
            (resource.RLIMIT_CPU, cpu),
            (resource.RLIMIT_AS, memory),
            (resource.RLIMIT_FSIZE, fsize),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NOFILE, 64),
        ):
            # a limit the hard limit does not allow stays as it is
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(limit, (value, value))

    return apply


class CodeExec(Verifier):
    """Run the reply's code against hidden tests (``tests=`` or the row's gold); reward = share
    of tests passed.

    Args:
        tests: a snippet or list of snippets; ``None`` reads them from the gold (a string, a
            list, or a dict with ``"tests"``).
        timeout: wall-clock seconds for the whole run.
        memory_mb, file_size_mb: address-space and file-size limits; ``max_output`` caps the
            captured stdout/stderr characters kept in the reason.
    """

    def __init__(
        self,
        tests: str | list[str] | None = None,
        *,
        field: str | None = None,
        timeout: float = 10.0,
        memory_mb: int = 512,
        file_size_mb: int = 8,
        max_output: int = 2000,
        name: str | None = None,
    ) -> None:
        super().__init__(field=field, name=name)
        if timeout <= 0 or memory_mb < 32 or file_size_mb < 1:
            raise ConfigError("CodeExec needs timeout > 0, memory_mb >= 32 and file_size_mb >= 1")
        self.tests, self.timeout = tests, timeout
        self.memory, self.fsize = memory_mb * 2**20, file_size_mb * 2**20
        self.max_output = max_output
        self.needs_gold = tests is None

    def _tests(self, gold: Any) -> list[str] | None:
        source = self.tests if self.tests is not None else gold
        if isinstance(source, dict):
            source = source.get("tests")
        if isinstance(source, str):
            return [source]
        if isinstance(source, list) and all(isinstance(t, str) for t in source) and source:
            return list(source)
        return None

    def check(self, candidate: str, gold: Any, row: dict[str, Any]) -> Any:
        tests = self._tests(gold)
        if tests is None:
            return None, "CodeExec: tests must be a string or a non-empty list of strings"
        with tempfile.TemporaryDirectory(prefix="whileai-code-") as tmp:
            folder = Path(tmp)
            (folder / "solution.py").write_text(extract_code(candidate), encoding="utf-8")
            (folder / "tests.json").write_text(json.dumps(tests), encoding="utf-8")
            (folder / "runner.py").write_text(_RUNNER, encoding="utf-8")
            env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8"}
            cpu = max(1, int(self.timeout) + 1)
            with open(folder / "output.txt", "wb") as out:
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-B", "runner.py"],
                    cwd=tmp,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_limits(cpu, self.memory, self.fsize),
                )
                try:
                    code = proc.wait(timeout=self.timeout)
                except subprocess.TimeoutExpired:
                    _kill(proc)
                    return 0.0, f"timed out after {self.timeout:g}s (killed)"
            output = (
                (folder / "output.txt").read_bytes()[: self.max_output].decode("utf-8", "replace")
            )
            result_path = folder / "result.json"
            if not result_path.exists():
                why = f"signal {-code}" if code < 0 else f"exit {code}"
                tail = output.strip().splitlines()[-1:] or [""]
                return 0.0, f"crashed before reporting ({why}; CPU/memory limit?) {tail[0]:.200}"
            try:
                result = json.loads(result_path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, OSError):
                return 0.0, "the run left an unreadable result"
        if "load_error" in result:
            return 0.0, f"solution did not load: {result['load_error']}"
        results = result.get("results") or []
        passed = sum(1 for ok, _ in results if ok)
        first = next((msg for ok, msg in results if not ok), "")
        reason = f"{passed}/{len(tests)} tests passed" + (
            f"; first failure: {first}" if first else ""
        )
        return passed / len(tests), reason


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()
