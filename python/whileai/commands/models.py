"""``whileai models check|grade|logprobs``: the model backends from the command line."""

from __future__ import annotations

import argparse
import json
from typing import Any

from whileai.commands.manners import add_quiet


def register(sub: Any) -> None:
    """Add the model-backend subcommands to the CLI."""
    models = sub.add_parser("models", help="model backends: check a spec, LLM-grade a file, "
                                           "logprob reports",
                            epilog="examples:\n  whileai models check openai:gpt-4.1-mini\n"
                                   "  whileai models grade rows.jsonl -o rows.llm.jsonl")
    actions = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="send one chat request and print what came back",
                               epilog="example:\n  whileai models check openai:gpt-4.1-mini "
                                      "--role judge")
    check.add_argument("spec", nargs="?", default=None,
                       help="backend spec (default: WHILEAI_AGENT / whileai.configure)")
    check.add_argument("--role", default="agent", choices=("agent", "simulator", "judge"),
                       help="which configured model to use when no spec is given")
    check.set_defaults(func=run_check)

    grade = actions.add_parser("grade", help="grade a JSONL file of rows with an LLM judge",
                               epilog="example:\n  whileai models grade rows.jsonl --judge "
                                      "openai:gpt-4.1-mini --rubric rubric.md -o graded.jsonl")
    grade.add_argument("path", help="rows to grade (.jsonl)")
    grade.add_argument("--judge", default=None, help="judge spec (default: WHILEAI_JUDGE)")
    grade.add_argument("--rubric", default=None, help="rubric text or a rubric.md path")
    grade.add_argument("--use-privileged", action="store_true",
                       help="let the judge read the rows' privileged block")
    grade.add_argument("-o", "--output", required=True, help="where to write the graded rows")
    grade.add_argument("--workers", type=int, default=8, help="rows graded at once")
    add_quiet(grade)
    grade.set_defaults(func=run_grade)

    lp = actions.add_parser("logprobs", help="logprob coverage, KL and staleness of a file",
                            epilog="example:\n  whileai models logprobs rows.jsonl --base-model "
                                   "my-policy-v3")
    lp.add_argument("path", help="rows (.jsonl)")
    lp.add_argument("--ref", default="ref_logprob", help="row key of the reference logprob")
    lp.add_argument("--base-model", default=None, help="the current policy, for staleness")
    lp.set_defaults(func=run_logprobs)


def run_check(args: argparse.Namespace) -> int:
    """Resolve the spec, send "Say OK.", print the model, reply and usage."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.errors import ConfigError
    from whileai.simulations.models import ChatClient, resolve_spec

    spec = resolve_spec(args.role, args.spec)
    if spec is None:
        raise ConfigError(f"no {args.role} model: pass a spec or set WHILEAI_{args.role.upper()}")
    with ChatClient(spec, role=args.role) as client:
        reply = client.chat([{"role": "user", "content": "Say OK."}], max_tokens=16)
    print(f"{args.role}: {spec.label} at {spec.base_url}")
    print(f"model: {reply.model or client.model_name()}  finish: {reply.finish_reason}  "
          f"usage: {reply.input_tokens}/{reply.output_tokens}")
    print(f"reply: {reply.content[:200]!r}")
    return 0


def run_grade(args: argparse.Namespace) -> int:
    """Grade ``path`` and write the graded rows to ``--output``; print the report."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.commands.manners import load_checked_rows
    from whileai.rows.jsonl_write import write_jsonl
    from whileai.simulations.judge.llm_judge import grade

    rows = load_checked_rows(args.path)
    report = grade(rows, judge=args.judge, rubric=args.rubric,
                   use_privileged=args.use_privileged, workers=args.workers,
                   progress=not args.quiet)
    write_jsonl(args.output, rows)
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=2))
    return 0


def run_logprobs(args: argparse.Namespace) -> int:
    """Print the logprob report, the sampled KL and the staleness report."""
    # imported when the command runs: `whileai --help` loads no area
    from whileai.commands.manners import load_checked_rows
    from whileai.simulations.training.logprobs import (
        format_logprob_report,
        logprob_report,
        mean_kl,
        staleness_report,
    )

    rows = load_checked_rows(args.path)
    print(format_logprob_report(logprob_report(rows)))
    kl = mean_kl(rows, ref=args.ref)
    print(f"mean_kl ({args.ref}): {kl['mean_kl']} over {kl['rows']} rows, {kl['skipped']} "
          "skipped")
    stale = staleness_report(rows, base_model=args.base_model)
    print(f"versions: {stale['versions']}  stale: {stale['stale']} "
          f"(usable {stale['stale_usable']})")
    for warning in stale["warnings"]:
        print(f"  ! {warning}")
    return 0
