"""DPO with TRL: on-policy preference pairs, the length check, constructed negatives.

Offline part (runs everywhere, seconds): simulate four rollouts per ask, grade them, pair each
ask's best rollout with a worse one (``build_preference_pairs``), read what the pairs teach
(length), build a constructed negative for each ask the policy never failed, export the pairs in
TRL's shape, render them through TRL's own chat-template step with a local toy tokenizer, and
open the run the trainer's callback reports to.

GPU part: TRL's DPOTrainer with LoRA, only where torch and a CUDA GPU exist.

Run from this folder: ``python run.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import whileai.simulations as zps

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
sys.path.insert(0, str(EXAMPLES))
from judge import no_planted_mistake  # noqa: E402  (examples/judge.py)

TOOLS = json.loads((EXAMPLES / "tools.json").read_text(encoding="utf-8"))
POLICY = (EXAMPLES / "policy.txt").read_text(encoding="utf-8")
BASE_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
# A toy chat template: enough for TRL to render prompt, chosen and rejected offline.
TEMPLATE = (
    "{%- for m in messages -%}<|{{ m.role }}|>{% if m.content %}{{ m.content }}{% endif %}"
    "{% for c in m.tool_calls or [] %}<call>{{ c.function.name }} "
    "{{ c.function.arguments | tojson }}</call>{% endfor %}<|end|>\n{% endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
)


def constructed_negative(row: dict[str, Any]) -> dict[str, Any]:
    """A rejected side the policy never produced: no lookup, and a promised delivery date."""
    order = next((str(s["arguments"].get("order_id")) for s in row.get("steps") or []
                  if isinstance(s.get("arguments"), dict) and s["arguments"].get("order_id")),
                 "your order")
    bad = {k: v for k, v in row.items() if k not in ("messages", "reward", "reason")}
    bad.update(steps=[], final_text=f"Order {order} has shipped and will arrive tomorrow.",
               reward=0.0, reason="constructed: no lookup, a promised date", rollout_index=-1)
    return bad


def prepare(out: Path) -> Path:
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.4, seed=2), tools=TOOLS,
                        system_prompt=POLICY, simulator=False, mode="rl", situations=16,
                        repeats=4, repeat_policy="fixed", progress=False)
    graded = zps.run_judge(data, no_planted_mistake, progress=False)
    print(f"graded: {graded}")
    print(f"        {graded.pass_at}")

    pairs, report = zps.build_preference_pairs(graded)
    skipped = {k: v for k, v in report["skipped"].items() if v}
    print(f"on-policy pairs: {report['pairs']} from {report['tasks']} asks, skipped {skipped}")
    print(f"  chosen {report['chosen_mean_chars']:.0f} chars, "
          f"rejected {report['rejected_mean_chars']:.0f} chars on average")
    _, matched = zps.build_preference_pairs(graded, match_length=True)
    print(f"  length-matched (25%): {matched['pairs']} pairs, "
          f"{matched['skipped']['length_mismatch']} asks had none")

    paired = {p["scenario_id"] for p in pairs}
    flawless: dict[str, dict[str, Any]] = {}
    for row in graded.rows:
        if row["scenario_id"] not in paired and row["reward"] == 1.0:
            flawless.setdefault(row["scenario_id"], row)
    made = [{"prompt": row["prompt"], "scenario_id": sid, "chosen": row,
             "rejected": constructed_negative(row), "chosen_reward": 1.0,
             "rejected_reward": 0.0} for sid, row in sorted(flawless.items())]
    print(f"constructed negatives: {len(made)} (asks the policy never failed)")

    path = out / "dpo.jsonl"
    exported = zps.export_preference(pairs + made, path, format="trl", system_prompt=POLICY)
    print(zps.format_preference_report(exported))
    return path


def render(path: Path) -> None:
    """TRL's own data step on the file, with a local toy tokenizer (no download)."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(
        WordLevel(vocab={"[UNK]": 0}, unk_token="[UNK]")))
    tokenizer.chat_template = TEMPLATE
    rows = zps.load_rows(path)
    texts = [maybe_apply_chat_template({k: r[k] for k in ("prompt", "chosen", "rejected")},
                                       tokenizer) for r in rows]
    print(f"TRL: conversational {all(is_conversational(r) for r in rows)}, "
          f"{len(texts)} pairs rendered")
    shared = sum(t["prompt"].endswith("<|assistant|>") for t in texts)
    print(f"  prompts end at the generation prompt: {shared}/{len(texts)}")
    print(f"  last rejected: {texts[-1]['rejected'].strip()}")


def open_run(runs: Path, pairs_file: Path) -> None:
    from transformers import TrainerControl, TrainerState, TrainingArguments
    from transformers.trainer_callback import CallbackHandler, DefaultFlowCallback

    run = zps.training_run("dpo-no-planted-mistakes", base_model=BASE_MODEL,
                           trainer="trl.DPO", dataset=pairs_file.name, dir=runs, server=False)
    callback = zps.TrainerCallback(run)
    args = TrainingArguments(output_dir=str(runs / "out"), report_to=[], run_name=run.name)
    handler = CallbackHandler([DefaultFlowCallback, callback], None, None, None, None)
    state, control = TrainerState(max_steps=0), TrainerControl()
    handler.on_train_end(args, state, handler.on_train_begin(args, state, control))
    found = zps.get_run(run.id, dir=runs)
    print(f"run {found['name']}: {found['status']} (trainer {found['trainer']}, "
          f"dataset {found['dataset']})")


def gpu_ready() -> str | None:
    missing = [m for m in ("torch", "trl", "peft") if importlib.util.find_spec(m) is None]
    if missing:
        return f"{', '.join(missing)} not installed"
    import torch

    return None if torch.cuda.is_available() else "no CUDA GPU"


def train(pairs_file: Path, out: Path) -> None:  # pragma: no cover - GPU only
    from datasets import load_dataset
    from peft import LoraConfig
    from trl import DPOConfig, DPOTrainer

    dataset = load_dataset("json", data_files=str(pairs_file), split="train")
    dataset = dataset.select_columns(["prompt", "chosen", "rejected"])
    run = zps.training_run("dpo-no-planted-mistakes", base_model=BASE_MODEL, trainer="trl.DPO",
                           dataset=pairs_file.name)
    trainer = DPOTrainer(
        model=BASE_MODEL,
        args=DPOConfig(output_dir=str(out / "dpo-out"), num_train_epochs=3, beta=0.1,
                       per_device_train_batch_size=4, learning_rate=5e-6, logging_steps=1,
                       report_to=[]),
        train_dataset=dataset,
        peft_config=LoraConfig(r=16, lora_alpha=32, target_modules="all-linear",
                               task_type="CAUSAL_LM"),
    )
    trainer.add_callback(zps.TrainerCallback(run))  # rewards/margins etc. land on the run
    trainer.train()
    print(f"run {run.id}: {run.status}")


def main() -> None:
    parser = argparse.ArgumentParser(description="DPO with TRL on on-policy pairs")
    parser.add_argument("--out", default=None, help="where dpo.jsonl goes (default: temp)")
    parser.add_argument("--train", action="store_true",
                        help="train even if not detected (needs torch, TRL, peft, a GPU)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dpo-") as tmp:
        out = Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        print("== data")
        path = prepare(out)
        print("== wiring (no model)")
        render(path)
        open_run(out / "runs", path)
        print("== training")
        why = gpu_ready()
        if why is not None and not args.train:
            print(f"skipped the training step: {why} (it needs torch, TRL, peft and a GPU)")
            return
        train(path, out)


if __name__ == "__main__":
    main()
