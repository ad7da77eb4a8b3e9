"""One row file in, six training targets out: eval, SFT, preference, GRPO prompts, OPSD hints,
OPD. Migrates the legacy file first. Offline, seeded, a second or two; files land in ``out/``.

Every target is a projection of the same four objects a row splits into (``zps.from_row``):
``Task`` (the ask, its world, the privileged reference), ``Rollout`` (what the agent did),
``Judgment`` (the reward) and ``Marker`` (behaviour measurements).
"""

from __future__ import annotations

import json
from pathlib import Path

from legacy import POLICY, TOOLS, write_legacy

import whileai.simulations as zps

OUT = Path(__file__).parent / "out"


def migrate(path: Path) -> list[dict]:
    """Legacy rows to schema v1: normalise the shape (reward included), stamp the version."""
    legacy = zps.load_rows(path)
    versions = {zps.schema_version_of(r) for r in legacy}
    # tool_trace/output/messages/score -> steps/final_text/reward, then the version stamp
    rows = [{**row, "schema_version": zps.SCHEMA_VERSION} for row in zps.load_traces(legacy)]
    check = zps.check_rows(rows)
    print(f"migrated {len(legacy)} rows from schema {sorted(versions)} to "
          f"{zps.SCHEMA_VERSION}: {check['valid']} valid, {check['invalid']} invalid")
    return rows


def write(name: str, rows: list[dict]) -> int:
    return zps.write_jsonl(OUT / name, rows)


def line(target: str, n: int, unit: str, reads: str) -> None:
    print(f"  {target:<11}{n:>3} {unit:<8} {reads}")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    print(f"legacy.jsonl: {write_legacy(OUT / 'legacy.jsonl')} rows")
    rows = migrate(OUT / "legacy.jsonl")
    zps.write_jsonl(OUT / "rows.jsonl", rows)
    print(zps.pass_at(rows))

    # 1. eval: whole tasks held out, graded later by a judge that reads the privileged reference.
    held, train = zps.split_pseudo_production(rows, fraction=0.25)
    eval_tasks = zps.build_tasks(held)
    print(f"  {'target':<11}{'n':>3} {'of':<8} reads")
    line("eval", write("eval.jsonl", eval_tasks), "tasks", "Task (+ reference for the grader)")

    # 2. SFT: rejection sampling, the best passing rollout of each ask.
    sft_rows, _ = zps.optimize(train, mode="sft")
    report = zps.export_dataset(sft_rows, OUT / "sft.jsonl", system_prompt=POLICY, tools=TOOLS,
                                format="trl")
    line("sft", report["rows_out"], "chats", "Task + Rollout, filtered on Judgment")

    # 3. preference: a passing and a failing rollout of the same ask.
    pairs, _ = zps.build_preference_pairs(train)
    pref = zps.export_preference(pairs, OUT / "preference.jsonl", format="trl",
                                 system_prompt=POLICY)
    line("preference", pref["pairs_out"], "pairs", "Task + two Rollouts, ordered by Judgment")

    # 4. GRPO prompts: asks with a mixed group, no completions (the policy samples its own).
    rl_rows, _ = zps.optimize(train, mode="rl")
    grpo = zps.build_tasks(rl_rows)
    line("grpo", write("grpo.jsonl", grpo), "prompts", "Task, kept on Judgment (pass rate in band)")

    # 5. OPSD hints: on-policy self-distillation. The student sees the ask; the same model as
    #    teacher also sees a hint (the privileged reference), and its token distribution is the
    #    target. The hint rides in its own column and never in the prompt.
    tasks = zps.build_tasks(train)
    system = [{"role": "system", "content": POLICY}]
    opsd = [{"id": t["id"], "prompt": system + t["prompt"],
             "hint": t["info"]["privileged"]["reference"]} for t in tasks]
    line("opsd", write("opsd.jsonl", opsd), "prompts", "Task (+ reference as the teacher's hint)")

    # 6. OPD: on-policy distillation. Prompts only: the student samples, a stronger teacher
    #    scores every token; no reward, no completion, no reference.
    opd = [{"id": t["id"], "prompt": system + t["prompt"]} for t in tasks]
    line("opd", write("opd.jsonl", opd), "prompts", "Task")

    # The answer key reaches only the grader's and the teacher's columns.
    student_side = ["sft.jsonl", "preference.jsonl", "opd.jsonl"]
    leaks = sum("privileged" in (OUT / f).read_text() for f in student_side)
    in_prompt = sum(o["hint"] in json.dumps(o["prompt"]) for o in opsd)
    print(f"privileged in student files: {leaks}; hints inside a prompt: {in_prompt}")
    stages = [*zps.stamp_stage(held, "eval"), *zps.stamp_stage(sft_rows, "sft"),
              *zps.stamp_stage(rl_rows, "rl")]
    report = zps.stage_report(stages)
    print(f"tasks in both eval and training: {len(report['eval_and_train'])}")


if __name__ == "__main__":
    main()
