"""What every ``whileai`` command shares: help layout, error lines, exit codes, warnings.

- A user error (a ``WhileaiError``, a missing or unreadable file, malformed JSON, a missing
  extra) prints one line ``whileai COMMAND: what went wrong`` on stderr and exits 2.
- Ctrl-C exits 130 after saying how many rows reached the command's ``--output`` file.
- Warnings print once each, as ``whileai: warning: ...``, without a source line.
- Anything else is a bug: one line naming it and exit 1 (``WHILEAI_DEBUG=1`` re-raises it so
  the traceback shows).
- ``Parser`` shows each option's default in ``--help`` and keeps the epilog's example layout.

>>> import argparse
>>> run_command(argparse.Namespace(command="demo", func=lambda a: 0))
0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any, NoReturn, TextIO

from whileai.errors import WhileaiError

__all__ = [
    "Parser",
    "add_quiet",
    "command_name",
    "load_checked_rows",
    "note",
    "read_json_file",
    "read_text_file",
    "run_command",
]

USER_ERRORS: tuple[type[BaseException], ...] = (
    WhileaiError, OSError, UnicodeError, json.JSONDecodeError, RecursionError, ImportError,
)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Epilogs kept as written; ``(default: X)`` added to options whose default says something."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if ("default" in text or default is None or default is False or default == []
                or default is argparse.SUPPRESS or not action.option_strings):
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with ``HelpFormatter``; subparsers inherit it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """A usage error: one line naming the command and where to read its options; exit 2."""
        self.exit(2, f"{self.prog}: {' '.join(message.split())}; see `{self.prog} --help`\n")


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """Give a long-running command ``-q/--quiet``: no progress line on stderr.

    The command passes ``progress=not args.quiet`` to the library call it makes.
    """
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress line on stderr (results and errors still print)")


def command_name(args: argparse.Namespace) -> str:
    """``"rows check"`` for a nested command, ``"grade"`` for a plain one."""
    parts = [str(args.command)] if getattr(args, "command", None) else []
    for key, value in vars(args).items():
        if key.endswith("_command") and isinstance(value, str):
            parts.append(value)
    return " ".join(parts) or "whileai"


def note(message: str) -> None:
    """One console line on stderr about a choice the command made for the user."""
    print(f"whileai: {message}", file=sys.stderr)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, (WhileaiError, FileNotFoundError)):
        return text
    return f"{type(exc).__name__}: {text}"


def _size(path: Any) -> int | None:
    try:
        return Path(path).stat().st_size if path else None
    except (OSError, TypeError, ValueError):
        return None


def _landed(path: Any, before: int | None) -> str:
    """How many rows were appended to ``path`` since it had ``before`` bytes."""
    if not path:
        return ""
    if str(path).endswith(".gz"):
        return f"; rows written so far are in {path}"
    start = before or 0
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            rows = handle.read().count(b"\n")
    except OSError:
        rows = 0
    return f"; {rows} row(s) landed in {path}"


class _Once:
    """A ``warnings.showwarning`` that prints each message once, with no source line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.seen: set[str] = set()

    def __call__(self, message: Warning | str, category: type[Warning], filename: str,
                 lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
        text = " ".join(str(message).split())
        if text not in self.seen:
            self.seen.add(text)
            print(f"whileai: warning: {text}", file=self.stream)


def run_command(args: argparse.Namespace) -> int:
    """Call ``args.func(args)`` with the shared manners; return the exit code."""
    name = command_name(args)
    output = getattr(args, "output", None)
    before = _size(output)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = _Once(sys.stderr)
        try:
            code: int = args.func(args)
        except KeyboardInterrupt:
            print(f"whileai {name}: interrupted{_landed(output, before)}", file=sys.stderr)
            return 130
        except USER_ERRORS as exc:
            if os.environ.get("WHILEAI_DEBUG") and not isinstance(exc, WhileaiError):
                raise
            print(f"whileai {name}: {_one_line(exc)}", file=sys.stderr)
            return 2
        except Exception as exc:
            if os.environ.get("WHILEAI_DEBUG"):
                raise
            print(f"whileai {name}: internal error ({_one_line(exc)}); please report it, and "
                  "set WHILEAI_DEBUG=1 to see where it happened", file=sys.stderr)
            return 1
    return code



def read_text_file(path: str, what: str) -> str:
    """The UTF-8 text of ``path``; a missing, binary or non-UTF-8 file raises ``SpecError``."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.errors import SpecError

    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise SpecError(f"{what} file {path!r} does not exist (working folder "
                        f"{Path.cwd()})") from None
    except IsADirectoryError:
        raise SpecError(f"{what} file {path!r} is a folder; pass the file") from None
    except OSError as exc:
        raise SpecError(f"{what} file {path!r} cannot be read ({exc.strerror})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: {what} is not UTF-8 text (byte {exc.start}); pass a text "
                        "file") from None


def read_json_file(path: str, what: str) -> Any:
    """The JSON value in ``path``; every way it can be wrong raises ``SpecError`` naming it."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.errors import RowError, SpecError
    from whileai.rows.depth import loads_limited
    text = read_text_file(path, what)
    try:
        return loads_limited(text, where=path)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{path}:{exc.lineno}: {what} is not valid JSON ({exc.msg})") from None
    except RowError as exc:
        raise SpecError(f"{what} {exc}") from None


def load_checked_rows(path: str) -> list[dict[str, Any]]:
    """The rows of a JSONL file, each checked against row schema v1 before any command uses it.

    A row with no task key is allowed (commands skip and count those); any other schema
    problem raises ``RowError`` naming the file, the row and the field, so a stage never meets
    a value of the wrong type half-way through.
    """
    # imported when the command runs: `whileai --help` loads no area
    from whileai.errors import RowError
    from whileai.rows.jsonl import load_rows
    from whileai.rows.schema import row_problems
    rows = load_rows(path)
    for index, row in enumerate(rows, start=1):
        problems = [p for p in row_problems(row) if "no task key" not in p]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise RowError(f"{path}: row {index}: {problems[0]}{more}; `whileai rows check "
                           f"{path}` lists every problem")
    return list(rows)
