"""Verifiable rewards: MathEqual, an answer-and-format All, CodeExec, and a JSON-schema check.

Each verifier is a judge: ``run_judge`` puts its reward on the rows, ``pass_at`` reads them, and
``optimize`` keeps what a training step can learn from. The replies are scripted (four rollouts
per ask), so the run is offline and the same every time.

Run from this folder: ``python run.py``. Offline, a few seconds (CodeExec starts sandboxes).
"""

from __future__ import annotations

import json
from pathlib import Path

import whileai.simulations as zps
from whileai.errors import SandboxError
from whileai.simulations.verify import All, CodeExec, JSONSchema, MathEqual, Regex

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[2] / "examples"


def rows_for(task: str, prompt: str, reference: str | None, replies: list[str]) -> list[dict]:
    """One ask with its k rollouts, in the row shape ``simulate`` returns."""
    privileged = {"reference": reference} if reference is not None else {}
    return [{"scenario_id": f"sc-{task}", "rollout_index": i, "prompt": prompt,
             "final_text": reply, "steps": [], "privileged": privileged}
            for i, reply in enumerate(replies)]


def show(title: str, graded: zps.ScoredData) -> None:
    rewards = [r["reward"] for r in graded.rows]
    print(f"{title}: {graded}")
    print(f"  rewards {' '.join(f'{x:.2f}' for x in rewards)}")
    print(f"  {graded.pass_at}")


def select(graded: zps.ScoredData) -> None:
    _, rl_report = zps.optimize(graded, mode="rl")
    _, sft_report = zps.optimize(graded, mode="sft")
    print(f"  optimize rl:  {rl_report['rows_in']} -> {rl_report['rows_out']} rows, "
          f"{rl_report['asks_out']} asks keep a gradient, "
          f"unanimous dropped {rl_report['dropped']['unanimous']}")
    print(f"  optimize sft: {sft_report['rows_out']} rows at reward 1.0")


def math_rows() -> list[dict]:
    asks = json.loads((HERE / "math.json").read_text(encoding="utf-8"))
    return [row for a in asks for row in rows_for(a["id"], a["prompt"], a["answer"], a["replies"])]


def main() -> None:
    print("== 1. MathEqual: the answer as mathematics, not as a string")
    rows = math_rows()
    answer = zps.run_judge(rows, MathEqual(), progress=False)
    show("MathEqual", answer)
    print(f"  e.g. {answer.rows[1]['final_text']!r}: {answer.rows[1]['reason']}")
    select(answer)

    print("== 2. All: the right answer AND in the format asked for (\\boxed{})")
    gate = All(MathEqual(), Regex(r"\\boxed\{[^}]+\}"))
    both = zps.run_judge(rows, gate, progress=False)
    show("All(MathEqual, Regex)", both)
    pairs = zip(answer.rows, both.rows, strict=True)
    lost = sum(a["reward"] == 1.0 and b["reward"] == 0.0 for a, b in pairs)
    print(f"  right but unboxed, failed by the gate: {lost}")
    select(both)

    print("== 3. CodeExec: the reply's code against hidden tests, in a sandbox")
    tasks = json.loads((HERE / "code.json").read_text(encoding="utf-8"))
    try:
        CodeExec(["assert True"])
        sandboxed = True
    except SandboxError as exc:  # no bwrap/unshare here: these candidates are our own code
        print(f"  (no sandbox on this host: {str(exc)[:60]}...; running unsandboxed)")
        sandboxed = False
    graded_rows = []
    for task in tasks:
        check = CodeExec(task["hidden_tests"], timeout=2, unsafe_no_sandbox=not sandboxed)
        code_rows = rows_for(task["id"], task["prompt"], None, task["replies"])
        graded_rows += zps.run_judge(code_rows, check, progress=False).rows
    code = zps.ScoredData(rows=graded_rows, judge_name="CodeExec")
    show("CodeExec", code)
    for row in code.rows:
        if row["reward"] < 1.0:
            print(f"  {row['scenario_id']}#{row['rollout_index']} {row['reward']:.2f} "
                  f"{row['reason'][:70]}")
    select(code)

    print("== 4. JSONSchema: a tool call's arguments against the tool's own schema")
    tools = json.loads((EXAMPLES / "tools.json").read_text(encoding="utf-8"))
    refund = next(t["function"] for t in tools if t["function"]["name"] == "refund_order")
    replies = ['{"order_id": "ORD-1", "reason": "damaged"}',
               '{"order_id": "ORD-1"}',
               '{"order_id": "ORD-1", "reason": "changed my mind"}',
               "refund_order(ORD-1, damaged)"]
    args_rows = rows_for("refund", "Refund ORD-1, it arrived broken.", None, replies)
    args = zps.run_judge(args_rows, JSONSchema(refund["parameters"]), progress=False)
    show("JSONSchema", args)
    for row in args.rows:
        print(f"  {row['reward']:.0f} {row['reason'][:80]}")
    pairs, pair_report = zps.build_preference_pairs(args.rows)
    print(f"  preference pairs {pair_report['pairs']}: chosen "
          f"{pairs[0]['chosen']['final_text']!r}")


if __name__ == "__main__":
    main()
