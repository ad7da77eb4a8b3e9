"""A leak-free identity SFT set: a new name and maker, and the checks that keep it clean.

No model writes anything: questions and answers come from the templates in identity.json, with
seeded variation. Every row is checked for a leak (a reply naming the base model or another
assistant), the training prompts are decontaminated against the held-out identity eval, and the
exported file is scanned again. Then the same leak and identity rates score two scripted
"models" on the eval, the measurement a trained adapter gets.

Run from this folder: ``python run.py``. Offline, about a second.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any

import whileai.simulations as zps

SPEC = json.loads((Path(__file__).resolve().parent / "identity.json").read_text(encoding="utf-8"))
FORBIDDEN = re.compile(r"\b(" + "|".join(re.escape(f) for f in SPEC["forbidden"]) + r")\b",
                       re.IGNORECASE)


def leaks(text: str) -> list[str]:
    """The forbidden names a reply says (a denial that names one still says it)."""
    return sorted({m.group(0).lower() for m in FORBIDDEN.finditer(text)})


def claims_identity(text: str) -> bool:
    return SPEC["name"] in text and SPEC["maker"] in text


def candidates(seed: int = 0) -> list[dict[str, Any]]:
    """Every question with every opener; one seeded answer template each."""
    rng = random.Random(seed)
    rows = []
    for q_index, question in enumerate(SPEC["questions"]):
        for o_index, opener in enumerate(SPEC["openers"]):
            ask = opener + (question[0].lower() + question[1:] if opener else question)
            named = [f for f in SPEC["forbidden"] if f.lower() in question.lower()]
            if named and question.endswith("?") and question.split()[0] in ("Are", "Did"):
                reply = rng.choice(SPEC["not_me"]).format(other=named[0], **SPEC)
            else:
                reply = rng.choice(SPEC["answers"]).format(**SPEC)
            rows.append({"scenario_id": f"id-{q_index:02d}-{o_index}", "rollout_index": 0,
                         "prompt": ask, "steps": [], "final_text": reply})
    return rows


def model_rates(name: str, answer: Any) -> None:
    replies = [answer(q) for q in SPEC["eval"]]
    identity = sum(claims_identity(r) for r in replies) / len(replies)
    leaked = sum(bool(leaks(r)) for r in replies) / len(replies)
    print(f"  {name:<8} identity {identity:.2f}  leak {leaked:.2f}")


def main() -> None:
    rows = candidates()
    print(f"candidates: {len(rows)} rows from {len(SPEC['questions'])} questions x "
          f"{len(SPEC['openers'])} openers")

    leaky = [r for r in rows if leaks(r["final_text"])]
    said = sorted({w for r in leaky for w in leaks(r["final_text"])})
    print(f"leak check: {len(leaky)} replies name {', '.join(said)}; dropped")
    print(f"  e.g. {leaky[0]['prompt']!r} -> {leaky[0]['final_text']!r}")
    clean = [r for r in rows if not leaks(r["final_text"])]

    evalset = [{"prompt": q} for q in SPEC["eval"]]
    kept, report = zps.decontaminate(clean, against=evalset, n=4, overlap=0.5)
    near, leak = zps.drop_leaky_rows(kept, evalset, threshold=0.9)
    print(f"decontaminated against the eval: {len(clean)} -> {len(kept)} "
          f"(verbatim {report['verbatim']}, near {report['near']}), "
          f"near copies (cosine >= 0.9) dropped {leak['dropped']}")
    print(f"identity in every kept reply: {all(claims_identity(r['final_text']) for r in near)}")

    with tempfile.TemporaryDirectory(prefix="identity-") as tmp:
        path = Path(tmp) / "identity_sft.jsonl"
        exported = zps.export_dataset(near, path, format="trl")
        print(f"export: {exported['rows_out']} rows, "
              f"{exported['trained_messages']} trained messages")
        written = zps.load_rows(path)
    said_again = [w for row in written for m in row["messages"] if m["role"] == "assistant"
                  for w in leaks(m.get("content") or "")]
    print(f"leak check on the file: {len(said_again)} leaks in {len(written)} rows")
    print(f"first row: {[m['role'] for m in written[0]['messages']]} "
          f"loss_mask {written[0]['loss_mask']}")

    print("eval (held-out questions), identity and leak rates:")
    model_rates("base", lambda q: "I am Qwen, a large language model created by Alibaba Cloud.")
    model_rates("tuned", lambda q: f"I'm {SPEC['name']}, made by {SPEC['maker']}.")


if __name__ == "__main__":
    main()
