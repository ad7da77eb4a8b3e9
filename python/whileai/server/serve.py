"""Run the server (``whileai serve``) or mint a key (``whileai serve --create-key NAME``)."""

from __future__ import annotations

import gc
import sys

from whileai.server.config import ServerConfig

__all__ = ["create_key", "run"]


def create_key(config: ServerConfig, account: str, *, admin: bool = False) -> str:
    """Mint a key for ``account`` (created when new); the key goes to stdout, once."""
    from whileai.server.app import open_store
    from whileai.server.services.accounts import create_key as mint

    # A server may be running on this folder: its uploads in progress are not stray files.
    store = open_store(config, sweep_uploads=False)
    created, key = mint(store, account, admin=admin)
    store.engine.dispose()
    print(f"minted key {created.key_id} for account {created.name} ({created.id}); it is shown "
          "only once:", file=sys.stderr)
    return key


def run(config: ServerConfig, *, host: str, port: int, log_level: str = "info") -> None:
    """Serve until interrupted."""
    import uvicorn

    from whileai.server.app import create_app
    from whileai.server.connections import guarded_protocol

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
