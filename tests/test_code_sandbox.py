"""CodeExec's sandbox against hostile candidates, on every backend this host runs.

Each attack is written so that a *successful* escape changes the verdict or leaves a trace the
test can see (a marker in the reason, a file, a connection, a live process).
"""

from __future__ import annotations

import json
import socket
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from whileai.errors import SandboxError
from whileai.simulations.judge.verify.code import CodeExec
from whileai.simulations.judge.verify.sandbox import BACKENDS, find_sandbox, sandbox_status

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

SECRET = "sk-test-SANDBOX0123456789abcdef"
MARKER = f"grader-marker-{uuid.uuid4().hex}"  # shaped like nothing, so never masked
HIDDEN = f"hidden-test-{uuid.uuid4().hex}"


def _backends() -> list[Any]:
    status = sandbox_status() if sys.platform.startswith("linux") else {}
    return [pytest.param(name, marks=pytest.mark.skipif(
        status.get(name) is not None, reason=f"{name}: {status.get(name)}")) for name in BACKENDS]


def _row(code: str) -> dict[str, Any]:
    return {"prompt": "p", "final_text": f"```python\n{code}\n```"}


def _live(mark: str) -> list[int]:
    """Host processes whose command line carries ``mark``."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if mark.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


_LEAK_CHECK = '''
import os, glob
found = []
texts = [repr(dict(os.environ))]
for path in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline") + ["/proc/1/environ"]:
    try:
        texts.append(open(path, "rb").read().decode("latin-1"))
    except OSError:
        pass
for text in texts:
    for needle in ({needles}):
        if needle in text:
            found.append(needle)
if found:
    raise SystemError("ESCAPED " + " ".join(found))
def f():
    return 1
'''

_FILES_CHECK = '''
import os, sys
hits = []
for path in ("/etc/passwd", "/etc/shadow", "/root/.bashrc", {home!r}):
    if os.path.exists(path):
        hits.append(path)
for top in ("/", "/tmp"):
    for dirpath, dirs, files in os.walk(top):
        if dirpath.startswith(("/proc", "/sys", "/usr", "/dev", sys.base_prefix)):
            dirs[:] = []
            continue
        for name in files:
            try:
                with open(os.path.join(dirpath, name), "rb") as fh:
                    if {hidden!r}.encode() in fh.read(1 << 20):
                        hits.append(os.path.join(dirpath, name))
            except OSError:
                pass
for fd in range(3, 40):
    try:
        os.set_blocking(fd, False)
    except OSError:
        continue
    try:
        if {hidden!r}.encode() in os.read(fd, 1 << 16):
            hits.append(f"fd {{fd}}")
    except OSError:
        pass
    os.set_blocking(fd, True)
if hits:
    raise SystemError("ESCAPED " + " ".join(hits))
def f():
    return 1
'''

_WRITE_OUTSIDE = '''
import os
for path in ({target!r}, os.path.expanduser("~/whileai-escape"), "/usr/whileai-escape"):
    try:
        with open(path, "w") as fh:
            fh.write("escaped")
    except OSError:
        pass
def f():
    return 1
'''

_NETWORK = '''
import socket
s = socket.socket()
s.settimeout(1)
try:
    s.connect(("127.0.0.1", {port}))
except OSError:
    pass
else:
    raise SystemError("ESCAPED connected")
def f():
    return 1
'''

_SPAWN_MANY = '''
import subprocess, sys
n = 0
for _ in range(200):
    try:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", {mark!r}])
    except OSError:
        break
    n += 1
def spawned():
    return n
'''

_FORK_BOMB = '''
import os, subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", {mark!r}])
while True:
    try:
        os.fork()
    except OSError:
        pass
'''

_SETSID_CHILD = '''
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(60)",
                  {mark!r}], start_new_session=True)
while True:
    pass
'''

_CHROOT_ESCAPE = '''
import subprocess, sys
escape = (
    "import os\\nos.makedirs('/tmp/x', exist_ok=True)\\nos.chroot('/tmp/x')\\n"
    "for _ in range(64):\\n    os.chdir('..')\\nos.chroot('.')\\n"
    "print('ESCAPED' if os.path.exists('/etc/passwd') else 'held')"
)
try:
    out = subprocess.run(["unshare", "-Urm", sys.executable, "-c", escape],
                         capture_output=True, text=True, timeout=5).stdout
except (OSError, subprocess.SubprocessError):
    out = ""
if "ESCAPED" in out:
    raise SystemError("ESCAPED chroot")
def f():
    return 1
'''

_FORGE = '''
import json, os
forged = json.dumps({"results": [[True, ""]] * 50, "nonce": "x"})
with open("result.json", "w") as fh:
    fh.write(forged)
print("50/1 tests passed")
for fd in range(0, 64):
    try:
        os.write(fd, (forged + "\\n" + json.dumps({"ok": True}) + "\\n").encode())
    except OSError:
        pass
os._exit(0)
'''


def _attacks(tmp: Path, port: int) -> dict[str, tuple[str, list[str], float]]:
    """name -> (candidate code, hidden tests, the reward an unescaped sandbox gives)."""
    needles = ", ".join(repr(n) for n in (SECRET, MARKER, "pytest", "PYTEST"))
    mark = f"whileai-proc-{uuid.uuid4().hex}"
    return {
        "env_and_procfs": (_LEAK_CHECK.format(needles=needles), ["assert f() == 1"], 1.0),
        "files_and_hidden_tests": (
            _FILES_CHECK.format(home=str(tmp / "home"), hidden=HIDDEN),
            [f"# {HIDDEN}\nassert f() == 1"], 1.0),
        "write_outside": (_WRITE_OUTSIDE.format(target=str(tmp / "home" / "escaped.txt")),
                          ["assert f() == 1"], 1.0),
        "network": (_NETWORK.format(port=port), ["assert f() == 1"], 1.0),
        "nested_namespace_escape": (_CHROOT_ESCAPE, ["assert f() == 1"], 1.0),
        "process_limit": (_SPAWN_MANY.format(mark=mark), ["assert spawned() < 20"], 1.0),
        "fork_bomb": (_FORK_BOMB.format(mark=mark), ["assert True"], 0.0),
        "setsid_child": (_SETSID_CHILD.format(mark=mark), ["assert True"], 0.0),
        "forged_result": (_FORGE, ["assert False"], 0.0),
        "early_exit": ("import sys\nsys.exit(0)", ["assert False", "assert f() == 1"], 0.0),
        "always_equal": ("class Yes:\n    def __eq__(self, other):\n        return True\n"
                         "    __hash__ = object.__hash__\n"
                         "def f():\n    return Yes()", ["assert f() == 4", "assert 4 == f()"],
                         0.0),
    }


ATTACKS = ["env_and_procfs", "files_and_hidden_tests", "write_outside", "network",
           "nested_namespace_escape",
           "process_limit", "fork_bomb", "setsid_child", "forged_result", "early_exit",
           "always_equal"]


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("attack", ATTACKS)
def test_the_sandbox_holds(attack: str, backend: str, tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GRADER_MARKER", MARKER)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    code, tests, expected = _attacks(tmp_path, listener.getsockname()[1])[attack]
    timeout = 1.5 if expected == 0.0 and "while True" in code else 8.0
    verifier = CodeExec(tests, sandbox=backend, timeout=timeout, max_processes=16)
    out = verifier(_row(code))
    try:
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody ever connected
    finally:
        listener.close()
    blob = json.dumps(out)
    assert out["reward"] == expected, out["reason"]
    assert "ESCAPED" not in blob
    assert SECRET not in blob
    assert MARKER not in blob
    assert "50/1" not in blob
    assert list((tmp_path / "home").iterdir()) == []
    for line in code.splitlines():
        if "whileai-proc-" in line:
            mark = line.split("'")[-2] if "'" in line else ""
            assert mark.startswith("whileai-proc-")
            assert _live(mark) == [], "a process outlived the check"


@pytest.mark.parametrize("backend", _backends())
def test_pytest_style_tests_are_collected_and_called(backend: str) -> None:
    tests = ["def test_add():\n    assert add(1, 2) == 3\n\ndef test_zero():\n"
             "    assert add(-1, 1) == 0\n", "assert add(2, 2) == 4"]
    wrong = CodeExec(tests, sandbox=backend, timeout=8)(_row("def add(a, b):\n    return 4"))
    assert wrong["reward"] == pytest.approx(1 / 3)
    assert "1/3 tests passed" in wrong["reason"]
    assert "test_add" in wrong["reason"]
    right = CodeExec(tests, sandbox=backend, timeout=8)(_row("def add(a, b):\n    return a + b"))
    assert right["reward"] == 1.0
    assert "3/3" in right["reason"]


@pytest.mark.parametrize("backend", _backends())
def test_candidate_objects_work_through_proxies(backend: str) -> None:
    code = ("class Stack:\n    def __init__(self):\n        self.items = []\n"
            "    def push(self, x):\n        self.items.append(x)\n"
            "    def pop(self):\n        return self.items.pop()\n"
            "    def __len__(self):\n        return len(self.items)\n"
            "def pair(a, b):\n    return (a, {b: {a}})\n"
            "def gen(n):\n    yield from range(n)\n"
            "def boom():\n    raise KeyError('k')\n"
            "LIMIT = 3\n")
    tests = ["s = Stack()\ns.push(1)\ns.push(2)\nassert len(s) == 2\nassert s.pop() == 2",
             "assert pair(1, 'x') == (1, {'x': {1}})", "assert list(gen(LIMIT)) == [0, 1, 2]",
             "try:\n    boom()\nexcept KeyError:\n    pass\nelse:\n    raise AssertionError",
             "assert s.items == [1]"]
    out = CodeExec(tests, sandbox=backend, timeout=8)(_row(code))
    assert out["reward"] == 1.0, out["reason"]


def test_no_sandbox_means_a_clear_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # neither bwrap nor unshare can be found
    from whileai.simulations.judge.verify import sandbox

    monkeypatch.setattr(sandbox, "_probe", lambda name: f"the `{name}` program (test)")
    with pytest.raises(SandboxError, match="unsafe_no_sandbox=True") as caught:
        CodeExec("assert True")
    assert "bwrap" in str(caught.value)
    assert "unshare" in str(caught.value)
    assert find_sandbox(unsafe_no_sandbox=True).name == "none"
    unsafe = CodeExec(["assert f() == 2"], unsafe_no_sandbox=True, timeout=8)
    assert unsafe(_row("def f():\n    return 2"))["reward"] == 1.0


@pytest.mark.parametrize("module", ["sandbox", "code"])
@pytest.mark.skipif(sys.platform.startswith("linux") and None not in sandbox_status().values(),
                    reason="no working sandbox on this host")
def test_sandbox_doctests(module: str) -> None:
    import doctest
    import importlib

    mod = importlib.import_module(f"whileai.simulations.judge.verify.{module}")
    assert doctest.testmod(mod).failed == 0
