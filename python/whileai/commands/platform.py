"""Platform commands: login, status, logout, keys, datasets, push, pull, purge, signup.

They talk to a whileai server (``whileai serve``) through ``whileai.platform``; each command
prints with a ``format_*`` function so the output is testable without a terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from whileai.commands.manners import add_quiet
from whileai.errors import ConfigError

__all__ = ["format_datasets", "format_keys", "format_purge", "format_push", "format_status",
           "register"]


def register(sub: Any) -> None:
    """Add the platform commands to the CLI."""
    login = sub.add_parser(
        "login", help="check an API key against the server and save it",
        epilog="examples:\n  whileai login --url http://127.0.0.1:6070   # asks for the key\n"
               "  whileai login --key-stdin < key.txt\n\nThe key comes from WHILEAI_API_KEY, "
               "else the terminal's prompt, else\nstdin. --key KEY works too, but any user of "
               "the machine can read a command line.")
    login.add_argument("--key-stdin", action="store_true",
                       help="read the key from the first line of stdin (even on a terminal)")
    login.add_argument("--key", default=None,
                       help="the API key itself (avoid: other local users can see it in the "
                            "process list)")
    login.add_argument("--url", default=None,
                       help="the server (else WHILEAI_BASE_URL, else http://127.0.0.1:6070)")
    login.set_defaults(func=run_login)
    status = sub.add_parser("status", help="which server and account this machine uses",
                            epilog="example:\n  whileai status\n\nExit 1 when not logged in.")
    status.set_defaults(func=run_status)
    logout = sub.add_parser("logout", help="forget the saved API key",
                            epilog="example:\n  whileai logout")
    logout.set_defaults(func=run_logout)
    keys = sub.add_parser("keys", help="the account's API keys: list them, revoke one",
                          epilog="examples:\n  whileai keys list\n  whileai keys create --name ci\n"
                                 "  whileai keys revoke key_1a2b3c4d5e6f7a8b")
    key_actions = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    key_list = key_actions.add_parser("list", help="ids, names, dates; * marks the key in use",
                                      epilog="example:\n  whileai keys list")
    key_list.set_defaults(func=run_keys)
    key_new = key_actions.add_parser(
        "create", help="mint another key for your account (to rotate keys); printed once",
        epilog="example:\n  whileai keys create --name laptop")
    key_new.add_argument("--name", default="default", help="a label for the key")
    key_new.set_defaults(func=run_create_key)
    revoke = key_actions.add_parser(
        "revoke", help="refuse a key from now on (the account's other keys keep working)",
        epilog="example:\n  whileai keys revoke key_1a2b3c4d5e6f7a8b")
    revoke.add_argument("key_id", metavar="KEY_ID", help="the key's id (key_..., see keys list)")
    revoke.set_defaults(func=run_revoke)
    listing = sub.add_parser("datasets", help="list your datasets, newest first",
                             epilog="example:\n  whileai datasets")
    listing.set_defaults(func=run_datasets)
    push = sub.add_parser(
        "push", help="upload a JSONL file as a dataset (gated, as zps.push_file)",
        epilog="examples:\n  whileai push rollout.jsonl --name airline-v3 --agent airline-support\n"
               "  whileai push sft.jsonl --mode sft   # an SFT export: gate it as SFT rows")
    push.add_argument("path", metavar="FILE", help="the JSONL file (.jsonl or .jsonl.gz)")
    push.add_argument("--name", default=None, help="the dataset's name (default: the file name)")
    push.add_argument("--agent", default=None, help="the agent the set belongs to")
    push.add_argument("--mode", default=None, choices=("rl", "sft", "explore", "adaptive"),
                      help="the mode that made the rows; rl/sft also pick the gate's shape")
    push.add_argument("--purpose", default=None, choices=("train", "holdout", "eval"),
                      help="what the set is for (default: train)")
    push.add_argument("--parent", default=None, help="the ds_ id or name this set iterates on")
    push.add_argument("--no-gate", dest="gate", action="store_false",
                      help="upload the bytes as they are, without the publish gate")
    add_quiet(push)
    push.set_defaults(func=run_push)
    pull = sub.add_parser("pull", help="download a dataset as JSONL",
                          epilog="examples:\n  whileai pull ds_1a2b3c -o train.jsonl\n"
                                 "  whileai pull airline-v3   # by name: the newest of that name")
    pull.add_argument("dataset_id", metavar="ID", help="the dataset's id (ds_...) or its name")
    pull.add_argument("-o", "--output", default=None, help="file to write (default: ID.jsonl)")
    add_quiet(pull)
    pull.set_defaults(func=run_pull)
    purge = sub.add_parser(
        "purge", help="delete an agent and its datasets, or empty datasets",
        epilog="examples:\n  whileai purge --agent my-agent --dry-run\n"
               "  whileai purge --empty --max-rows 10")
    purge.add_argument("--agent", default=None, help="the agent to remove with everything under it")
    purge.add_argument("--empty", action="store_true",
                       help="delete datasets with no bytes (or --max-rows rows or fewer)")
    purge.add_argument("--max-rows", type=int, default=0,
                       help="with --empty: also delete sets with at most this many rows")
    purge.add_argument("--dry-run", action="store_true", help="only count what would go")
    purge.set_defaults(func=run_purge)
    signup = sub.add_parser("signup", help="create an account (servers with --open-signup)",
                            epilog="example:\n  whileai signup --email me@example.com")
    signup.add_argument("--email", required=True, help="the account's e-mail address")
    signup.add_argument("--url", default=None, help="the server (as for login)")
    signup.set_defaults(func=run_signup)


def format_status(url: str, info: dict[str, Any] | None, source: str) -> str:
    """Where the key comes from and what the server says about the account.

    >>> format_status("http://h", None, "nowhere")
    'server http://h; not logged in (whileai login --key K)'
    """
    if info is None:
        return f"server {url}; not logged in (whileai login --key K)"
    usage, limits = info["usage"], info["limits"]
    return (f"server {url}; account {info['name']} ({info['tier']}); key from {source}; "
            f"{usage['datasets']} datasets, {usage['storageBytes']:,} of "
            f"{limits['storageBytes']:,} bytes")


def format_datasets(listing: dict[str, Any]) -> str:
    """One line per dataset, then the storage used.

    >>> format_datasets({"datasets": [], "storageBytes": 0})
    'no datasets (0 bytes stored)'
    """
    if not listing["datasets"]:
        return f"no datasets ({listing['storageBytes']:,} bytes stored)"
    lines = [f"{'id':<28} {'rows':>9} {'purpose':<8} {'public':<6} name"]
    lines.extend(f"{d['datasetId']:<28} {d['rows']:>9,} {d['purpose']:<8} "
                 f"{'yes' if d['public'] else 'no':<6} {d['name']}" for d in listing["datasets"])
    lines.append(f"{len(listing['datasets'])} datasets, {listing['storageBytes']:,} bytes stored")
    return "\n".join(lines)


def format_keys(listing: dict[str, Any]) -> str:
    """One line per key (``*`` marks the one in use), then how many still work.

    >>> print(format_keys({"keys": [{"keyId": "key_1", "name": "ci", "createdAt": 0.0,
    ...     "revokedAt": None, "current": True}], "count": 1, "active": 1}))
    * key_1  created 1970-01-01 00:00  active   ci
    1 key(s), 1 active
    """
    import time

    def day(epoch: float) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch))

    lines = [f"{'*' if k['current'] else ' '} {k['keyId']}  created {day(k['createdAt'])}  "
             f"{'active ' if k['revokedAt'] is None else 'revoked'}  {k['name']}"
             for k in listing["keys"]]
    lines.append(f"{listing['count']} key(s), {listing['active']} active")
    return "\n".join(lines)


def format_purge(report: dict[str, Any]) -> str:
    """What a purge removed (or would remove).

    >>> format_purge({"deleted": ["ds_1"], "count": 1, "dryRun": True})
    'would delete 1 dataset(s): ds_1'
    """
    verb = "would delete" if report.get("dryRun") else "deleted"
    if "agent" in report:
        return (f"{verb} agent {report['agent']}: {report['datasets']} dataset(s), "
                f"{report['traces']} trace(s)")
    return f"{verb} {report['count']} dataset(s): {', '.join(report['deleted']) or '-'}"


def run_login(args: argparse.Namespace) -> int:
    """Check the key with ``GET /v1/account`` and save it only when the server accepts it."""
    import getpass

    # imported when the command runs: `whileai --help` loads no area
    from whileai.config import setting
    from whileai.platform.account import account
    from whileai.platform.credentials import find_url, save_login

    if args.key:
        print("whileai login: warning: --key puts the key where other users of this machine "
              "can read it (the process list, shell history); prefer the prompt or "
              "--key-stdin", file=sys.stderr)
    key = args.key or (None if args.key_stdin else setting("API_KEY")) or _read_key(
        stdin_only=args.key_stdin, prompt=getpass.getpass)
    url = find_url(args.url)
    info = account(key, base_url=url)
    path = save_login(key, url)
    print(f"logged in to {url} as {info['name']}; key saved to {path}")
    return 0


def _read_key(*, stdin_only: bool, prompt: Callable[[str], str]) -> str:
    """The key from the terminal's prompt, else from the first line of stdin.

    Raises:
        ConfigError: no terminal and nothing on stdin (says how to give the key).
    """
    stream = sys.stdin
    if not stdin_only and stream is not None and stream.isatty():
        try:
            key = prompt("whileai API key: ").strip()
        except EOFError:  # the terminal closed (Ctrl-D)
            key = ""
    else:
        key = stream.readline().strip() if stream is not None else ""
    if not key:
        raise ConfigError("no API key: run it in a terminal to be asked, pipe the key in "
                          "(whileai login --key-stdin < key.txt), or set WHILEAI_API_KEY")
    return key


def run_status(_args: argparse.Namespace) -> int:
    """Print the server, the account and where the key came from; exit 1 when logged out."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.config import setting
    from whileai.platform.account import account
    from whileai.platform.credentials import find_url, read_login

    url = find_url()
    source = "WHILEAI_API_KEY" if setting("API_KEY") else read_login().get("path", "")
    if not source:
        print(format_status(url, None, ""))
        return 1
    print(format_status(url, account(), source))
    return 0


def run_logout(_args: argparse.Namespace) -> int:
    """Delete the saved key."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.credentials import credentials_path, delete_login

    print("logged out" if delete_login() else f"no saved login at {credentials_path()}")
    return 0


def run_keys(_args: argparse.Namespace) -> int:
    """List the account's keys."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.account import list_keys

    print(format_keys(list_keys()))
    return 0


def run_create_key(args: argparse.Namespace) -> int:
    """Mint a key for the account: the key on stdout (once), its id on stderr."""
    import sys

    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.account import create_key

    made = create_key(args.name)
    print(f"minted {made['keyId']} ({args.name}) for account {made['account']}; it is shown "
          "only once:", file=sys.stderr)
    print(made["key"])
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    """Revoke one key of the account."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.account import revoke_key

    entry = revoke_key(args.key_id)
    print(f"revoked {entry['keyId']} ({entry['name']}); the server refuses it from now on")
    return 0


def run_datasets(_args: argparse.Namespace) -> int:
    """List the account's datasets."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.manage import datasets

    print(format_datasets(datasets()))
    return 0


def format_push(entry: dict[str, Any]) -> str:
    """What ``whileai push`` prints: the new set's id, name and rows, then the gate's warnings.

    >>> print(format_push({"datasetId": "ds_1", "name": "a", "rows": 3,
    ...                    "gate": {"mode": "sft", "warnings": ["w"]}}))
    pushed ds_1 (a): 3 rows, gate sft
      warning: w
    """
    gate = entry.get("gate")
    lines = [f"pushed {entry.get('datasetId')} ({entry.get('name')}): {entry.get('rows')} rows"
             + (f", gate {gate.get('mode')}" if gate else ", ungated")]
    lines.extend(f"  warning: {w}" for w in (gate or {}).get("warnings") or [])
    return "\n".join(lines)


def run_push(args: argparse.Namespace) -> int:
    """Upload a JSONL file as a dataset."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.datasets import push_file

    entry = push_file(args.path, args.name, parent=args.parent, gate=args.gate, mode=args.mode,
                      agent=args.agent, purpose=args.purpose, progress=not args.quiet)
    print(format_push(entry))
    return 0


def run_pull(args: argparse.Namespace) -> int:
    """Write a dataset to a JSONL file."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.datasets import pull

    default = args.dataset_id.replace("/", "_").replace("\\", "_") + ".jsonl"
    path = pull(args.dataset_id, args.output or default, progress=not args.quiet)
    print(f"wrote {path}")
    return 0


def run_purge(args: argparse.Namespace) -> int:
    """Remove an agent with everything under it, or the account's empty datasets."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.agents import purge_agent
    from whileai.platform.manage import delete_empty_datasets

    if (args.agent is None) == (not args.empty):
        print("whileai purge: pass --agent NAME or --empty (one of them)")
        return 2
    if args.agent is not None:
        report = purge_agent(args.agent, dry_run=args.dry_run)
    else:
        report = delete_empty_datasets(max_rows=args.max_rows, dry_run=args.dry_run)
    print(format_purge(report))
    return 0


def run_signup(args: argparse.Namespace) -> int:
    """Create an account, save its key, print where."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.platform.account import signup
    from whileai.platform.credentials import find_url, save_login

    url = find_url(args.url)
    made = signup(args.email, base_url=url)
    path = save_login(made["key"], url)
    print(f"account {made['account']} created on {url}; its key is saved to {path}")
    return 0
