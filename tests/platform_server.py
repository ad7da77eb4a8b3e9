"""A real ``whileai serve`` in a subprocess for the platform tests (no mocked server).

``start_server`` picks a free loopback port and a temp dir, waits for ``/health``, and returns
a ``Server`` that can mint keys, stop, and restart on the same dir. With
``WHILEAI_DATABASE_URL`` set (the PostgreSQL run of ``make test``), every server gets a fresh
database of its own in that cluster.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

SERVER_MODULES = ("fastapi", "uvicorn", "sqlalchemy", "alembic")


def require_server_extra() -> None:
    """Skip the calling test module when the ``server`` extra is not installed."""
    import importlib.util

    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the server extra is missing ({', '.join(missing)})",
                    allow_module_level=True)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def fresh_database() -> str:
    """A new empty PostgreSQL database when WHILEAI_DATABASE_URL is set, else ``""``."""
    base = os.environ.get("WHILEAI_DATABASE_URL", "")
    if not base:
        return ""
    import psycopg

    name = f"whileai_test_{secrets.token_hex(6)}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    head, _, _ = base.rpartition("/")
    return f"{head}/{name}"


@dataclass
class Server:
    """One server process and the dir and database it owns."""

    directory: Path
    database: str
    args: tuple[str, ...] = ()
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.directory.parent / f"{self.directory.name}.log"

    @property
    def url(self) -> str:
        """The base URL."""
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The environment the server runs with."""
        env = dict(os.environ)
        env.pop("WHILEAI_API_KEY", None)
        env["WHILEAI_DATABASE_URL"] = self.database
        return env

    def start(self, *, keep_port: bool = False) -> None:
        """Start (or restart) and wait until ``/health`` answers; on a fresh port unless
        ``keep_port`` (a restart that clients must find again)."""
        if not (keep_port and self.port):
            self.port = free_port()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "whileai", "serve", "--dir", str(self.directory),
                 "--port", str(self.port), *self.args],
                env=self.env(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"whileai serve exited: {self.log.read_text()[-2000:]}")
            try:
                if requests.get(self.url + "/health", timeout=2).ok:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"whileai serve did not answer: {self.log.read_text()[-2000:]}")

    def stop(self, *, kill: bool = False) -> None:
        """Stop the process (SIGKILL with ``kill``, else SIGTERM) and wait for it."""
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.proc = None

    def key(self, account: str, *, admin: bool = False, existing: bool = False,
            in_process: bool = True) -> str:
        """Mint a key for ``account`` with ``whileai serve --create-key`` (``existing``: the
        account exists already, ``--existing``), run in this process (a new Python per key
        cost about 1.5 s of start-up, for some 60 keys a run), or in a new one
        (``in_process=False``: the benches, which time their own CPU, keep the server modules
        and their objects out of their process)."""
        flags = [*(["--admin"] if admin else []), *(["--existing"] if existing else [])]
        if not in_process:
            done = subprocess.run(
                [sys.executable, "-m", "whileai", "serve", "--dir", str(self.directory),
                 "--create-key", account, *flags],
                env=self.env(), capture_output=True, check=True, timeout=120)
            return done.stdout.decode().strip()
        from whileai.cli import main

        out = io.StringIO()
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
            patch.setenv("WHILEAI_DATABASE_URL", self.database)
            code = main(["serve", "--dir", str(self.directory), "--create-key", account,
                         *flags])
        assert code == 0, f"whileai serve --create-key {account} exited {code}"
        return out.getvalue().strip()

    def files(self, sub: str) -> list[Path]:
        """Files under ``parts`` or ``tmp`` of the server dir."""
        root = self.directory / sub
        return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


def start_server(root: Path, *args: str) -> Server:
    """A started server in ``root/server`` with extra ``whileai serve`` flags."""
    server = Server(directory=root / "server", database=fresh_database(), args=tuple(args))
    server.start()
    return server
