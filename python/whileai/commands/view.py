"""``whileai view PATH``: read a rows file in the browser (needs the ``server`` extra)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register", "run_view"]


def register(sub: Any) -> None:
    """Add ``view`` to the CLI."""
    view = sub.add_parser(
        "view", help="browse a rows file locally: list, filters, conversations, hand labels",
        epilog="examples:\n  whileai view rows.jsonl\n"
               "  whileai view hf_folder/ --port 7000 --no-browser\n"
               "  whileai view before.jsonl --compare after.jsonl\n\n"
               "Serves on 127.0.0.1 only; hand labels go beside the file "
               "(rows.labels.jsonl), the shape attach_labels reads.",
    )
    view.add_argument("path", help="a .jsonl / .jsonl.gz file (a SimulationData.save) or a "
                                   "Hugging Face folder")
    view.add_argument("--compare", metavar="OTHER", default=None,
                      help="a second rows file to compare against (pass@1, flipped tasks)")
    view.add_argument("--port", type=int, default=0,
                      help="port on 127.0.0.1 (default: a free one, printed)")
    view.add_argument("--no-browser", action="store_true", help="print the URL, open nothing")
    view.add_argument("--show-privileged", action="store_true",
                      help="show each row's teacher-only privileged context (local only)")
    view.add_argument("--annotator", default="local", help="the name your hand labels carry")
    view.set_defaults(func=run_view)


def run_view(args: argparse.Namespace) -> int:
    """Index the rows and serve the viewer until Ctrl-C."""
    from whileai.server import extra_missing  # the extras are checked before any is imported

    if extra_missing("whileai view"):
        return 2
    if not 0 <= args.port < 65536:
        print(f"whileai view: --port must be 0 to 65535; got {args.port}", file=sys.stderr)
        return 2
    # imported when the command runs: `whileai --help` loads no area
    from whileai.server.pages.local import serve, viewer_app

    app = viewer_app(args.path, compare=args.compare, show_privileged=args.show_privileged,
                     annotator=args.annotator)
    serve(app, port=args.port, open_browser=not args.no_browser)
    return 0
