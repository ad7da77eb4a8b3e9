"""``whileai serve``: run the self-hosted platform (needs the ``server`` extra)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run_serve"]


def register(sub: Any) -> None:
    """Add ``serve`` to the CLI."""
    serve = sub.add_parser(
        "serve", help="run the platform server (datasets, agents, keys)",
        epilog="examples:\n  whileai serve --create-key me      # mint an API key, printed once\n"
               "  whileai serve --dir ./server --port 6070\n"
               "  WHILEAI_DATABASE_URL=postgresql://u:p@host/db whileai serve --host 0.0.0.0",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind")
    serve.add_argument("--port", type=int, default=6070, help="port to listen on")
    serve.add_argument("--dir", default=None,
                       help="server folder, private to you (WHILEAI_SERVER_DIR, else "
                            "$WHILEAI_HOME/server, else ~/.whileai/server)")
    serve.add_argument("--create-key", metavar="NAME", default=None,
                       help="mint an API key for account NAME, print it once and exit")
    serve.add_argument("--admin", action="store_true",
                       help="with --create-key: the account may mint keys for others")
    serve.add_argument("--existing", action="store_true",
                       help="with --create-key: add the key to the account even when it "
                            "exists already (else you are asked, or refused without a "
                            "terminal)")
    serve.add_argument("--open-signup", action="store_true",
                       help="let anyone create an account (POST /v1/signup); off by default")
    serve.add_argument("--max-storage-bytes", type=int, default=None,
                       help="stored bytes per account (default: 50 GiB)")
    serve.add_argument("--max-rows-per-dataset", type=int, default=None,
                       help="rows one dataset may hold (default: 50,000,000)")
    serve.add_argument("--max-request-bytes", type=int, default=None,
                       help="largest request body; bigger ones get 413 (default: 8 GiB)")
    serve.add_argument("--max-pending-exports", type=int, default=None,
                       help="OTLP trace exports held at once; more get 429 (default: 8)")
    serve.add_argument("--max-exports-per-account", type=int, default=None,
                       help="of those, how many one account may hold (default: 4)")
    serve.add_argument("--read-timeout", type=int, default=None,
                       help="seconds to send a request's headers, and each piece of its body; "
                            "slower connections are closed (default: 30)")
    serve.add_argument("--idle-timeout", type=int, default=None,
                       help="seconds a kept-alive connection may sit idle (default: 5)")
    serve.add_argument("--min-body-rate", type=int, default=None,
                       help="bytes/s a request body must average past the first "
                            "--read-timeout seconds (default: 65536)")
    serve.add_argument("--max-auth-failures", type=int, default=None,
                       help="refused credentials per client address per minute before 429 "
                            "(default: 60)")
    serve.add_argument("--max-signups", type=int, default=None,
                       help="sign-ups per client address per hour (default: 20)")
    serve.add_argument("--secure-cookies", action="store_true",
                       help="always mark the pages' cookies Secure (they are whenever a "
                            "request comes over https, e.g. from a TLS proxy)")
    serve.add_argument("--log-level", default="warning", help="uvicorn log level")
    serve.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """Start the server, or mint a key and exit."""
    from whileai.server import extra_missing  # the extras are checked before any is imported

    if extra_missing("whileai serve"):
        return 2
    # imported when the command runs: `whileai --help` loads no area
    from whileai.server.config import LIMITS, ServerConfig, default_directory

    limits = {name: getattr(args, name) for name in LIMITS if getattr(args, name) is not None}
    for name, value in limits.items():
        if value < 1:
            print(f"whileai serve: --{name.replace('_', '-')} must be at least 1; got {value}",
                  file=sys.stderr)
            return 2
    config = ServerConfig(
        directory=Path(args.dir).expanduser() if args.dir else default_directory(),
        database=os.environ.get("WHILEAI_DATABASE_URL", ""),
        open_signup=args.open_signup, secure_cookies=args.secure_cookies, **limits,
    )
    # imported when the command runs: `whileai --help` loads no area
    from whileai.server import serve

    if args.create_key:  # a refused folder, an unconfirmed account: ConfigError, exit 2
        print(serve.create_key(config, args.create_key, admin=args.admin,
                               existing=args.existing, confirm=_ask))
        return 0
    serve.run(config, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _ask(question: str) -> bool:
    """Ask on the terminal (the question on stderr: stdout carries only the key); no terminal
    is no answer (False)."""
    if sys.stdin is None or not sys.stdin.isatty():
        return False
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in {"y", "yes"}
