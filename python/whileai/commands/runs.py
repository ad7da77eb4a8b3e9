"""``whileai runs list|show|import``: training runs kept in local folders or on the platform."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    """Add the training-run subcommands to the CLI."""
    runs = sub.add_parser(
        "runs", help="training runs: list, show, import a local run folder",
        epilog="example: whileai runs show run_0123456789abcdef",
    )
    actions = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the local runs, newest first",
                                 epilog="example: whileai runs list --dir ~/.whileai/runs")
    listing.add_argument("--dir", default=None,
                         help="folder of run folders (default: WHILEAI_HOME/runs)")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(func=run_list)

    show = actions.add_parser("show", help="one run: status, last metrics, holdout, alarms",
                              epilog="example: whileai runs show run_0123456789abcdef --json")
    show.add_argument("run", help="run id (a local folder, else the platform)")
    show.add_argument("--dir", default=None, help="folder of run folders")
    show.add_argument("--json", action="store_true", help="print the run (with series) as JSON")
    show.set_defaults(func=run_show)

    upload = actions.add_parser("import", help="upload a local run folder to the platform",
                                epilog="example: whileai runs import ~/.whileai/runs/run_0123")
    upload.add_argument("folder", help="a run folder (holds run.json)")
    upload.set_defaults(func=run_import)


def run_list(args: argparse.Namespace) -> int:
    """Print the local runs."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.simulations.training.runs import list_runs
    runs = list_runs(dir=args.dir)
    if args.json:
        print(json.dumps(runs, indent=1, default=str))
        return 0
    if not runs:
        print("no runs")
    for run in runs:
        print(f"{run['id']}  {run.get('status', '?'):8}  {run.get('points', 0):>7} points  "
              f"{run.get('name')}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print one run."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.simulations.training.runs import format_run, get_run

    run = get_run(args.run, dir=args.dir)
    print(json.dumps(run, indent=1, default=str) if args.json else format_run(run))
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Upload a run folder (what is not sent yet) to the configured platform."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.simulations.training.record import RunFolder
    from whileai.simulations.training.sender import upload_folder
    from whileai.simulations.training.transport import configured_runs_transport
    folder = RunFolder(args.folder)
    transport = configured_runs_transport(required=True)
    assert transport is not None  # required=True raises instead
    sent = upload_folder(folder, transport)
    print(f"{folder.run_id}: sent {sent['points']} points and {sent['events']} events")
    return 0
