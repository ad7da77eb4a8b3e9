"""Run untrusted code under the operating system's isolation, or refuse to.

A :class:`Sandbox` starts ``python -I -B`` running the harness (``_confine.py`` then
``_harness.py``, as one program) in a fresh set of Linux namespaces:

- ``bwrap`` (bubblewrap): new PID, network, IPC, UTS and mount namespaces (plus a user namespace
  when we are not root); read-only binds of ``/usr`` and the interpreter's prefix, nothing else
  of the host (no ``/etc``, no home, no project folder); a fresh ``/proc`` that shows only the
  sandbox's own processes; a private tmpfs ``/tmp``; an empty environment.
- ``unshare`` (util-linux): the same namespaces; the harness itself builds the tmpfs root with
  read-only binds, mounts ``/proc`` and ``/tmp`` and chroots into it.

In both, the harness then becomes ``nobody`` (when we are root outside: no capabilities, an
unprivileged user id, so ``RLIMIT_NPROC`` bites) or drops every capability (inside a user
namespace), sets ``no_new_privs`` and the resource limits (CPU, address space, file size,
processes, open files, no core dumps). The sandbox dies with its parent; :func:`kill_tree`
kills the namespace's first process, and with it every process inside, ``setsid`` children and
fork bombs included.

:func:`find_sandbox` probes once per process which backend really works here (a container may
have ``bwrap`` but forbid namespaces); with none, it raises :class:`~whileai.errors.SandboxError`
naming what is missing, unless the caller passed ``unsafe_no_sandbox=True``.

>>> find_sandbox("auto", unsafe_no_sandbox=True).name in ("bwrap", "unshare", "none")
True
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from whileai.errors import ConfigError, SandboxError

__all__ = ["BACKENDS", "Sandbox", "find_sandbox", "kill_tree", "sandbox_status"]

BACKENDS = ("bwrap", "unshare")
_HARNESS = Path(__file__).with_name("_harness.py")
_NOBODY = 65534
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache",)


@functools.lru_cache(maxsize=1)
def _harness_source() -> str:
    """``_confine.py`` then ``_harness.py`` as one program (the second's future import dropped)."""
    first = _HARNESS.with_name("_confine.py").read_text(encoding="utf-8")
    second = _HARNESS.read_text(encoding="utf-8").replace(
        "from __future__ import annotations\n", "", 1)
    return first + "\n" + second


def _interpreter() -> tuple[str, tuple[str, ...]]:
    """The real interpreter binary (not a venv's link) and the folders it needs."""
    prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)}
    candidates = [getattr(sys, "_base_executable", None), sys.executable]
    for exe in candidates:
        if exe:
            real = os.path.realpath(exe)
            if any(real.startswith(p + os.sep) for p in prefixes) and os.access(real, os.X_OK):
                return real, tuple(sorted(prefixes))
    real = os.path.realpath(sys.executable)
    return real, tuple(sorted(prefixes | {str(Path(real).parent.parent)}))


def _layout() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Read-only binds (source, target) and symlinks (path, target) mirroring the host."""
    binds: list[tuple[str, str]] = [("/usr", "/usr")]
    links: list[tuple[str, str]] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            links.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            binds.append((path, path))
    binds += [(f, f) for f in _SYSTEM_FILES if os.path.isfile(f)]
    for prefix in _interpreter()[1]:
        if not any(prefix == b or prefix.startswith(b + "/") for b, _ in binds):
            binds.append((prefix, prefix))
    return binds, links


@dataclass(frozen=True, slots=True, kw_only=True)
class Sandbox:
    """One isolation backend: ``bwrap``, ``unshare``, or ``none`` (no isolation, opted into)."""

    name: str

    @property
    def isolated(self) -> bool:
        """Whether the code runs in its own namespaces (``False`` only for ``none``)."""
        return self.name != "none"

    def spawn(
        self,
        role: str,
        *,
        limits: dict[str, int],
        stdin: IO[bytes] | int,
        output: IO[bytes] | int,
        fds: dict[str, int],
        workdir: str,
        tmp_bytes: int = 64 * 2**20,
    ) -> subprocess.Popen[bytes]:
        """Start the harness in ``role`` inside this sandbox; ``fds`` (name -> fd) are passed in.

        The child runs in its own session; end it with :func:`kill_tree`.
        """
        exe, _ = _interpreter()
        root = os.geteuid() == 0 if hasattr(os, "geteuid") else False
        cfg: dict[str, Any] = {"role": role, "mode": self.name, "limits": limits, **fds}
        if self.isolated and root:
            cfg["setuid"] = _NOBODY
        prefix: list[str] = []
        if self.name == "bwrap":
            prefix = _bwrap_args(root=root, tmp_bytes=tmp_bytes)
        elif self.name == "unshare":
            binds, links = _layout()
            os.makedirs(os.path.join(workdir, "root"), exist_ok=True)
            cfg.update(root=os.path.join(workdir, "root"), binds=binds, links=links,
                       tmp_bytes=tmp_bytes)
            prefix = ["unshare", "--pid", "--fork", "--kill-child", "--mount", "--net", "--ipc",
                      "--uts"]
            if not root:
                prefix += ["--user", "--map-root-user"]
            prefix.append("--")
        argv = [*prefix, exe, "-I", "-B", "-c", _harness_source(), json.dumps(cfg)]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        return subprocess.Popen(
            argv, stdin=stdin, stdout=output, stderr=subprocess.STDOUT, cwd=workdir, env=env,
            pass_fds=tuple(fds.values()), start_new_session=True, close_fds=True,
        )


def _bwrap_args(*, root: bool, tmp_bytes: int) -> list[str]:
    args = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    if root:  # no user namespace: the harness needs these two to become nobody, then has none
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user", "--disable-userns"]
    binds, links = _layout()
    made: set[str] = set()
    for source, target in binds:
        for parent in reversed(Path(target).parents[:-1]):  # readable by nobody on the way
            if str(parent) not in made:
                made.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", source, target]
    for path, target in links:
        args += ["--symlink", target, path]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(tmp_bytes), "--perms", "1777",
             "--tmpfs", "/tmp", "--chdir", "/tmp", "--setenv", "PATH", "/usr/bin:/bin", "--"]
    return args


def kill_tree(proc: subprocess.Popen[bytes], *, grace: float = 2.0) -> None:
    """Kill a sandboxed process and everything it started, and wait until they are gone.

    The launcher (``bwrap`` / ``unshare``) is killed with its process group; the namespace's
    first process dies with it (``--die-with-parent`` / ``--kill-child``), and the kernel kills
    every other process of the namespace before that one is reaped.
    """
    inner = _children(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()
    proc.wait()
    deadline = time.monotonic() + grace
    while inner and time.monotonic() < deadline:
        inner = [pid for pid in inner if _alive(pid)]
        if inner:
            time.sleep(0.01)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


@functools.cache
def _probe(name: str) -> str | None:
    """``None`` when ``name`` works on this host, else what is missing."""
    if not sys.platform.startswith("linux"):
        return f"Linux namespaces (this is {sys.platform})"
    tool = {"bwrap": "bwrap", "unshare": "unshare"}[name]
    if shutil.which(tool) is None:
        package = "bubblewrap" if name == "bwrap" else "util-linux"
        return f"the `{tool}` program (install the `{package}` package)"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="whileai-probe-") as tmp:
        os.chmod(tmp, 0o755)
        proc = Sandbox(name=name).spawn(
            "probe", limits={}, stdin=subprocess.DEVNULL, output=subprocess.PIPE, fds={},
            workdir=tmp,
        )
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            kill_tree(proc)
            return f"`{tool}` did not start within 20s"
    text = (out or b"").decode("utf-8", "replace").strip()
    if proc.returncode == 0 and text.startswith("ok"):
        return None
    last = text.splitlines()[-1] if text else f"exit {proc.returncode}"
    return f"working namespaces for `{tool}` ({last[:200]})"


def sandbox_status() -> dict[str, str | None]:
    """For each backend, ``None`` if it works here, else what is missing (probed once).

    >>> sorted(sandbox_status())
    ['bwrap', 'unshare']
    """
    return {name: _probe(name) for name in BACKENDS}


def find_sandbox(choice: str = "auto", *, unsafe_no_sandbox: bool = False) -> Sandbox:
    """The backend to run untrusted code with: ``choice`` (``"auto"`` = the first that works
    of ``bwrap``, then ``unshare``).

    Raises:
        ConfigError: ``choice`` is not ``auto``, ``bwrap`` or ``unshare``.
        SandboxError: no backend works here and ``unsafe_no_sandbox`` is not set; the message
            names what is missing.
    """
    if choice not in ("auto", *BACKENDS):
        raise ConfigError(f"sandbox={choice!r}: use 'auto', 'bwrap' or 'unshare'")
    names = BACKENDS if choice == "auto" else (choice,)
    missing: dict[str, str] = {}
    for name in names:  # probed in order, lazily: a working bwrap spares the unshare probe
        why = _probe(name)
        if why is None:
            return Sandbox(name=name)
        missing[name] = why
    if unsafe_no_sandbox and os.name == "posix":
        return Sandbox(name="none")
    why = "; ".join(f"{name} needs {what}" for name, what in missing.items())
    if os.name != "posix":
        raise SandboxError(f"CodeExec runs code only on POSIX systems ({why}); run the grader "
                           "in a Linux container or VM.")
    raise SandboxError(
        f"refusing to run untrusted code without isolation: {why}. Install bubblewrap "
        "(`apt-get install bubblewrap`) on a Linux host that allows namespaces, or pass "
        "unsafe_no_sandbox=True to run it with resource limits only (no isolation: the code "
        "can read your files and environment)."
    )
