"""Run the server (``whileai serve``) or mint a key (``whileai serve --create-key NAME``)."""

from __future__ import annotations

import errno
import gc
import socket
import sys
from collections.abc import Callable

from whileai.errors import ConfigError
from whileai.server.config import ServerConfig

__all__ = ["ExistingAccountError", "PortBusyError", "create_key", "port_problem", "run"]


class ExistingAccountError(ConfigError):
    """``--create-key`` named an account that exists, and nobody confirmed adding a key."""


class PortBusyError(ConfigError):
    """The address ``whileai serve`` should listen on is taken or cannot be bound."""


def create_key(config: ServerConfig, account: str, *, admin: bool = False,
               existing: bool = False, confirm: Callable[[str], bool] | None = None) -> str:
    """Mint a key for ``account`` (created when new); the key goes to stdout, once.

    An account that exists already gets a key only with ``existing`` or when ``confirm``
    (asked with a sentence on whose account it is) says yes: with ``--open-signup`` anyone may
    have made an account of that name.

    Raises:
        ExistingAccountError: the account exists and adding a key was not confirmed.
    """
    from whileai.server.app import open_store
    from whileai.server.services.accounts import create_key as mint
    from whileai.server.services.accounts import describe, existing_account

    # A server may be running on this folder: its uploads in progress are not stray files.
    store = open_store(config, sweep_uploads=False)
    try:
        found = existing_account(store, account)
        if found is not None and not existing:
            question = f"{describe(found)}; add a key to it?"
            if confirm is None or not confirm(question):
                raise ExistingAccountError(
                    f"{describe(found)}; a new key would read and write everything in it. "
                    f"Pass --existing to add a key to it anyway, or pick another name")
        created, key = mint(store, account, admin=admin)
    finally:
        store.engine.dispose()
    print(f"minted key {created.key_id} for {'existing' if found else 'new'} account "
          f"{created.name} ({created.id}) of the server in {config.directory}; it is shown "
          "only once:", file=sys.stderr)
    return key


def port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on right now, or None (checked by binding it, as
    uvicorn will, before the server folder is made)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (f"port {port} on {host} is in use by another program (another "
                        f"whileai serve?); stop it or pick a free one with --port")
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def run(config: ServerConfig, *, host: str, port: int, log_level: str = "info") -> None:
    """Serve until interrupted.

    Raises:
        PortBusyError: the address is taken (nothing was created yet).
        ServerFolderError: the server folder or its database is open to other users.
    """
    import uvicorn

    from whileai.server.app import create_app
    from whileai.server.connections import guarded_protocol

    problem = port_problem(host, port)
    if problem is not None:
        raise PortBusyError(problem)
    app = create_app(config)
    # What startup made lives as long as the process: out of the collector's sight, so its full
    # passes stay short; and young passes every 50,000 allocations, not 700, since a trace batch
    # allocates hundreds of thousands of short-lived objects that reference counting frees
    # anyway (about a fifth of ingest CPU went to the collector).
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    print(f"whileai serve: {config.directory} ({app.state.store.engine.dialect.name}) on "
          f"http://{host}:{port}", file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False,
                timeout_graceful_shutdown=5, timeout_keep_alive=config.idle_timeout,
                http=guarded_protocol(config.read_timeout))
