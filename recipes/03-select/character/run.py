"""Character training from a constitution: its traits become graded rows, length-matched
preference pairs and SFT rows; the judge is checked against the constitution's own labels; and a
before/after says whether the style moved without anything regressing. Offline, seeded, a second
or two; the training files land in ``out/``.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import whileai.simulations as zps

HERE = Path(__file__).parent
OUT = HERE / "out"
PROMPTS = json.loads((HERE / "prompts.json").read_text())
FACT = {p["prompt"]: p["fact"] for p in PROMPTS}
K = 8


# -- the judge: one marker per trait, 1.0 = the reply follows it ----------------------------------

def trait_markers(row: dict) -> dict[str, float]:
    style = zps.style_markers([row])[0]["markers"]  # no_hedging, no_sycophancy, no_apology, ...
    fact = FACT.get(row.get("prompt", ""), "")
    return {"answers": float(bool(fact) and fact.lower() in row["final_text"].lower()),
            "no_hedging": style["no_hedging"], "no_sycophancy": style["no_sycophancy"],
            "no_apology": style["no_apology"], "no_boilerplate": style["no_boilerplate"]}


def judge(row: dict) -> dict:
    markers = trait_markers(row)
    return {"reward": float(all(v == 1.0 for v in markers.values())), "markers": markers}


# -- a scripted model standing in for the policy -------------------------------------------------

def short(long: str) -> str:
    return re.split(r"[,;:]", long)[0].rstrip(".") + "."


def make_model(tic: float, evade: float):
    """Replies that carry each tic with probability ``tic`` and dodge with ``evade``."""
    long_of = {p["prompt"]: p["long"] for p in PROMPTS}

    def model(message: str) -> dict:
        rollout = zps.current_rollout()
        rng = random.Random(f"{message}|{rollout.rollout_index if rollout else 0}")
        body = long_of[message] if rng.random() < 0.5 else short(long_of[message])
        if rng.random() < evade:
            body = "It depends on your kitchen and ingredients, really."
        if rng.random() < tic:
            body = rng.choice(["I think ", "Perhaps ", "I believe "]) + body[0].lower() + body[1:]
        if rng.random() < tic:
            body = rng.choice(["Great question! ", "What a great question! "]) + body
        if rng.random() < tic:
            body = rng.choice(["I'm sorry, ", "I apologise, "]) + body[0].lower() + body[1:]
        if rng.random() < tic:
            body += rng.choice([" I hope this helps!", " Feel free to ask anything else."])
        return {"steps": [], "final_text": body}

    return model


def generate(model, spec: zps.Spec) -> list[dict]:
    data = zps.simulate(model, system_prompt="You are a cooking assistant.", simulator=False,
                        tasks=[{"task_id": p["id"], "prompt": p["prompt"]} for p in PROMPTS],
                        repeats=K, reproducible=True, progress=False)
    return zps.stamp_spec(data.grade(judge=judge).rows, spec)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    spec = zps.load_spec(HERE / "constitution.json")
    print(f"{spec}: {', '.join(spec.behaviors())}")

    # 1. Is the judge right? Grade the constitution's own labelled examples, trait by trait.
    constitution = json.loads((HERE / "constitution.json").read_text())
    egg = PROMPTS[0]["prompt"]
    print("judge against the constitution's labels:")
    for trait in constitution["traits"]:
        rows = [{"task_id": f"{trait['id']}-{i}", "prompt": egg, "final_text": ex["reply"],
                 "reward": trait_markers({"prompt": egg, "final_text": ex["reply"]})[trait["id"]],
                 "gold_reward": float(ex["follows"])} for i, ex in enumerate(trait["examples"])]
        agree = zps.judge_agreement(rows)
        missed = [r["final_text"] for r in rows if r["reward"] != r["gold_reward"]]
        print(f"  {trait['id']:<15} {agree['agreement']:.2f} of {agree['n']}"
              + (f"  misses: {missed[0]!r}" if missed else ""))

    # 2. Graded rows from the model we start with.
    before = generate(make_model(tic=0.2, evade=0.1), spec)
    print(f"before: {zps.pass_at(before)}")

    # 3. Preference pairs, with and without length matching.
    _, loose = zps.build_preference_pairs(before)
    matched, report = zps.build_preference_pairs(before, match_length=True)
    print(f"pairs: {loose['pairs']} unmatched, chosen {loose['chosen_mean_chars']:.0f} vs "
          f"rejected {loose['rejected_mean_chars']:.0f} chars: they teach 'be shorter'")
    print(f"pairs: {report['pairs']} length-matched, chosen {report['chosen_mean_chars']:.0f} vs "
          f"rejected {report['rejected_mean_chars']:.0f} chars; "
          f"{report['skipped']['length_mismatch']} asks had no matched pair")
    pref = zps.export_preference(matched, OUT / "preference.jsonl", format="trl")

    # 4. SFT rows: each ask's best reply that follows every trait.
    sft_rows, _ = zps.optimize(before, mode="sft")
    sft = zps.export_dataset(sft_rows, OUT / "sft.jsonl", format="trl")
    print(f"wrote {pref['pairs_out']} preference pairs and {sft['rows_out']} SFT rows")

    # 5. Before/after: the model after training on those rows, on the same asks.
    after = generate(make_model(tic=0.05, evade=0.1), spec)
    delta = zps.delta_report(before, after, target="pass_at_1",
                             must_not_regress=spec.behaviors(), n_resamples=1000)
    print(zps.format_delta_report(delta))
    print(f"spec version on both runs: {after[0]['spec_version'] == before[0]['spec_version']}")


if __name__ == "__main__":
    main()
