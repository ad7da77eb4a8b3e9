"""GRPO with TRL: prompts from the simulator, a verifiable reward, HackMonitor on the reward.

Offline part (runs everywhere, seconds): simulate RL-shaped groups, grade them with the
tool-discipline reward (reward.py), keep the asks that carry a gradient, write the GRPO prompt
set, and check the wiring (training run, HackMonitor wrapping the reward, TrainerCallback driven
by transformers' own callback handler, replaying the simulated rollouts as completions).

GPU part: TRL's GRPOTrainer with LoRA on a small instruct model, only where torch and a CUDA GPU
exist (``python run.py --train``, or automatically when both are there).

Run from this folder: ``python run.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
from pathlib import Path
from typing import Any

from reward import judge, tool_discipline

import whileai.simulations as zps

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TOOLS = json.loads((EXAMPLES / "tools.json").read_text(encoding="utf-8"))
POLICY = (EXAMPLES / "policy.txt").read_text(encoding="utf-8")
ENDORSED = ["tool:get_order", "tool:refund_order"]
BASE_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"


def prepare(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Simulate, grade, select; write ``grpo_prompts.jsonl``. Returns (kept rows, prompts)."""
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.5, seed=1), tools=TOOLS,
                        system_prompt=POLICY, simulator=False, mode="rl", situations=12,
                        repeats=8, progress=False)
    print(f"simulated: {data}")
    graded = zps.run_judge(data, judge, progress=False)
    print(f"graded:    {graded}")
    print(f"           {graded.pass_at}")
    agree = sum((r["reward"] == 1.0) == (not r["seeded"]) for r in graded.rows)
    missed = sorted({m for r in graded.rows if r["reward"] == 1.0 for m in r["seeded"]})
    print(f"reward vs planted labels: agrees on {agree}/{len(graded.rows)}, "
          f"pays for {', '.join(missed) or 'nothing planted'}")
    kept, report = zps.optimize(graded, mode="rl", endorsed=ENDORSED)
    print(f"optimize rl: {report['rows_in']} -> {report['rows_out']} rows, "
          f"{report['asks_out']}/{report['asks_in']} asks, "
          f"duplicates dropped {report['dropped']['duplicates']}, "
          f"unanimous asks dropped {report['dropped']['unanimous']['all_pass']}"
          f"+{report['dropped']['unanimous']['all_fail']}")
    print(f"hack scan: {report['hack_scan']['regime']}")
    for warning in report["hygiene_warnings"]:
        if warning.startswith("reward_hack"):
            print(f"  {warning[:96]}")
    prompts = [{"prompt": [{"role": "system", "content": POLICY}, *task["prompt"]],
                "scenario_id": task["id"],
                "pass_rate": task["info"]["calibration"]["pass_rate"]}
               for task in zps.build_tasks(kept)]
    zps.write_jsonl(out / "grpo_prompts.jsonl", prompts)
    rates = [p["pass_rate"] for p in prompts]
    print(f"grpo_prompts.jsonl: {len(prompts)} prompts, pass rate "
          f"{min(rates):.2f}..{max(rates):.2f}")
    return kept, prompts


def check_wiring(kept: list[dict[str, Any]], prompts: list[dict[str, Any]], runs: Path) -> None:
    """The run, the monitor and the callback, driven step by step without a model."""
    from trl.data_utils import is_conversational

    print(f"TRL reads the prompts as conversational: {is_conversational(prompts[0])}")
    from transformers.utils import get_json_schema
    from world_tools import get_order, refund_order

    built = [get_json_schema(f)["function"] for f in (get_order, refund_order)]
    same = [(f["name"], sorted(f["parameters"]["required"])) for f in built] == [
        (t["function"]["name"], sorted(t["function"]["parameters"]["required"])) for t in TOOLS]
    print(f"tool schemas TRL builds: {', '.join(f['name'] for f in built)} "
          f"(names and required arguments match tools.json: {same})")
    run = zps.training_run("grpo-tool-discipline", base_model=BASE_MODEL, trainer="trl.GRPO",
                           total_steps=6, dir=runs, server=False)
    monitor = zps.HackMonitor(run, endorsed=ENDORSED, every=2, min_obs=8, stop_on="feature")
    reward = monitor.wrap(tool_discipline)
    callback = zps.TrainerCallback(run, monitor=monitor)

    from transformers import TrainerControl, TrainerState, TrainingArguments
    from transformers.trainer_callback import CallbackHandler, DefaultFlowCallback

    args = TrainingArguments(output_dir=str(runs / "out"), report_to=[], run_name=run.name)
    state, control = TrainerState(max_steps=6), TrainerControl()
    handler = CallbackHandler([DefaultFlowCallback, callback], None, None, None, None)
    control = handler.on_train_begin(args, state, control)
    by_ask: dict[str, list[dict[str, Any]]] = {}
    for row in kept:
        by_ask.setdefault(row["scenario_id"], []).append(row)
    asks = sorted(by_ask)
    for step in range(1, 7):  # each step: two asks, their rollouts replayed as completions
        batch = [r for a in asks[2 * (step - 1):2 * step] for r in by_ask[a]]
        control = handler.on_step_begin(args, state, control)
        rewards = reward(prompts=[r["messages"][:2] for r in batch],
                         completions=[r["messages"][2:] for r in batch])
        state.global_step = step
        control = handler.on_step_end(args, state, control)
        control = handler.on_log(args, state, control,
                                 logs={"reward": sum(rewards) / len(rewards)})
        if control.should_training_stop:
            break
    handler.on_train_end(args, state, control)
    found = zps.get_run(run.id, dir=runs)
    logged = [p for p in found["series"] if "reward" in p]
    series = " ".join(f"{p['reward']:.2f}" for p in logged)
    print(f"run {found['status']} at step {found['summary']['global_step']}: "
          f"reward {series}")
    for alarm in monitor.alarms:
        print(f"alarm at step {alarm['step']}: {alarm['name']}: {alarm['message'][:72]}")


def gpu_ready() -> str | None:
    """None when torch (with CUDA), TRL and peft are importable; else what is missing."""
    missing = [m for m in ("torch", "trl", "peft") if importlib.util.find_spec(m) is None]
    if missing:
        return f"{', '.join(missing)} not installed"
    import torch

    return None if torch.cuda.is_available() else "no CUDA GPU"


def train(prompts_file: Path, out: Path) -> None:  # pragma: no cover - GPU only
    """The training step: GRPO with LoRA, the monitor wrapping the reward, on the run."""
    from datasets import load_dataset
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer
    from world_tools import get_order, refund_order

    dataset = load_dataset("json", data_files=str(prompts_file), split="train")
    run = zps.training_run("grpo-tool-discipline", base_model=BASE_MODEL, trainer="trl.GRPO")
    monitor = zps.HackMonitor(run, endorsed=ENDORSED, every=10, stop_on="feature")
    trainer = GRPOTrainer(
        model=BASE_MODEL,
        reward_funcs=[monitor.wrap(tool_discipline)],
        args=GRPOConfig(output_dir=str(out / "grpo-out"), max_steps=200, num_generations=8,
                        per_device_train_batch_size=8, learning_rate=1e-5, beta=0.04,
                        logging_steps=1, report_to=[]),
        train_dataset=dataset,
        tools=[get_order, refund_order],  # the policy calls the mock world while it generates
        peft_config=LoraConfig(r=16, lora_alpha=32, target_modules="all-linear",
                               task_type="CAUSAL_LM"),
    )
    trainer.add_callback(zps.TrainerCallback(run, monitor=monitor))
    trainer.train()
    print(zps.format_hack_monitor(monitor.summary()))
    print(f"run {run.id}: {run.status}")


def main() -> None:
    parser = argparse.ArgumentParser(description="GRPO with TRL on simulated prompts")
    parser.add_argument("--out", default=None,
                        help="where grpo_prompts.jsonl goes (default: a temp folder)")
    parser.add_argument("--train", action="store_true",
                        help="train even if not detected (needs torch, TRL, peft, a GPU)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grpo-") as tmp:
        out = Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        print("== data")
        kept, prompts = prepare(out)
        print("== wiring (no model)")
        check_wiring(kept, prompts, out / "runs")
        print("== training")
        why = gpu_ready()
        if why is not None and not args.train:
            print(f"skipped the training step: {why} (it needs torch, TRL, peft and a GPU)")
            return
        train(out / "grpo_prompts.jsonl", out)


if __name__ == "__main__":
    main()
