"""A fixed battery over the public API that prints one hash of everything it produced.

Run it before and after a refactor that must not change behaviour: the hashes must match.
It uses only ``import whileai.simulations as zps``, so it runs against any commit's source::

    WHILEAI_PURE=1 PYTHONPATH=<checkout>/python python tools/behaviour_battery.py [fixture.json]

It simulates in every mode on two specs (the README's order tool and, when present, the
tau-bench retail fixture in ``../shared/fixtures``), grades with a fixed callable judge, and runs
pass_at, hack_scan, decontaminate, optimize, publish_gate, preference pairs and every export.
Run-time measurements (``elapsed_seconds``, rates) and the kernel backend's name are left out of
the hash; temp paths are replaced by ``<tmp>``. ``-v`` prints one hash per step, to find which
step moved.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import whileai.simulations as zps

TOOLS = [{"type": "function", "function": {
    "name": "get_order", "description": "Look up an order by id.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"]}}}]
POLICY = "Help customers with orders. Never promise a delivery date the order record does not show."
# ../shared beside the repo (or beside the worktrees folder)
FIXTURE = next((p / "shared" / "fixtures" / "tau_retail.json"
                for p in Path(__file__).resolve().parents
                if (p / "shared" / "fixtures" / "tau_retail.json").exists()),
               Path("../shared/fixtures/tau_retail.json"))
# measured, not computed: they differ run to run or backend to backend
VOLATILE = {"elapsed_seconds", "seconds", "rate", "rows_per_second", "kernel_backend", "backend",
            "rollout_threads", "created_at", "timestamp", "duration_s", "eta_seconds"}
MODES = ("explore", "sft", "rl", "adaptive")


def _clean(value: Any, tmp: str) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v, tmp) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, (list, tuple)):
        return [_clean(v, tmp) for v in value]
    if isinstance(value, str):
        return value.replace(tmp, "<tmp>")
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return repr(value).replace(tmp, "<tmp>")


def _folder(path: Path) -> dict[str, str]:
    """Every file under ``path`` (relative name -> sha256 of its bytes)."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _judge(row: dict[str, Any]) -> dict[str, Any]:
    """A fixed, deterministic judge: pass unless the seeded agent slipped."""
    return {"reward": float(not row.get("seeded")), "reason": "battery"}


def _spec_steps(name: str, tools: list[Any], policy: str, out: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    runs = {}
    for mode in MODES:
        data = zps.simulate(zps.seeded_agent(tools, seed=3), tools=tools, system_prompt=policy,
                            simulator=False, mode=mode, budget=24, progress=False,
                            advanced={"seed": 5})
        runs[mode] = data
        results[f"{name}/simulate/{mode}"] = {
            "rows": data.trajectories, "search": data.search, "stopped": data.stopped_because,
            "repeats": data.rollouts_per_request, "summary": str(data)}
    rl = zps.simulate(zps.seeded_agent(tools, seed=1), tools=tools, system_prompt=policy,
                      simulator=False, mode="rl", situations=8, repeats=6, progress=False)
    results[f"{name}/simulate/rl-shaped"] = rl.trajectories
    scored = rl.grade(judge=_judge)
    results[f"{name}/grade"] = {"rows": scored.rows, "summary": str(scored)}
    graded = zps.grade([dict(r) for r in rl.trajectories], judge=_judge)
    results[f"{name}/zps.grade"] = {"rows": graded.rows}
    results[f"{name}/pass_at"] = zps.pass_at(scored.rows, n_resamples=300, seed=2).to_dict()
    results[f"{name}/hack_scan"] = zps.hack_scan(scored.rows, n_perm=50, min_obs=5, seed=1)
    against = [r["prompt"] for r in runs["explore"].trajectories[:6]]
    kept, report = zps.decontaminate(scored.rows, [{"prompt": p} for p in against])
    results[f"{name}/decontaminate"] = {"kept": kept, "report": report}
    for mode in ("rl", "sft"):
        rows, rep = zps.optimize(scored.rows, mode=mode)
        results[f"{name}/optimize/{mode}"] = {"rows": rows, "report": rep}
    results[f"{name}/publish_gate"] = zps.publish_gate(scored.rows, mode="rl")
    pairs, pair_report = zps.build_preference_pairs(scored.rows)
    results[f"{name}/pairs"] = {"pairs": pairs, "report": pair_report}
    results[f"{name}/training_rows"] = zps.training_rows(scored.rows)
    results[f"{name}/to_trl"] = zps.to_trl(scored.rows)
    folder = out / name
    folder.mkdir()
    results[f"{name}/export_dataset"] = zps.export_dataset(
        scored.passes(), folder / "sft.jsonl", system_prompt=policy, tools=tools)
    results[f"{name}/export_training"] = zps.export_training(scored.rows, folder / "train.jsonl")
    results[f"{name}/export_preference"] = zps.export_preference(pairs, folder / "pref.jsonl")
    results[f"{name}/export_environment"] = zps.export_environment(
        scored.rows, folder / "env", system_prompt=policy, tools=tools)
    # jsonl: the same bytes whether or not pyarrow is installed
    results[f"{name}/to_hf_folder"] = zps.to_hf_folder(scored.rows, folder / "hf", engine="jsonl")
    results[f"{name}/files"] = _folder(folder)
    return results


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    paths = [a for a in argv if a != "-v"]
    fixture = Path(paths[0]) if paths else FIXTURE
    specs = [("readme", TOOLS, POLICY)]
    if fixture.exists():
        tau = json.loads(fixture.read_text(encoding="utf-8"))
        specs.append(("tau_retail", tau["tools"], tau["system_prompt"]))
    else:
        print(f"note: {fixture} is absent; only the README spec ran", file=sys.stderr)
    total = hashlib.sha256()
    with tempfile.TemporaryDirectory() as tmp:
        for name, tools, policy in specs:
            for step, value in _spec_steps(name, tools, policy, Path(tmp)).items():
                text = json.dumps(_clean(value, tmp), sort_keys=True, ensure_ascii=False)
                digest = hashlib.sha256(text.encode()).hexdigest()
                total.update(f"{step}={digest}\n".encode())
                if verbose:
                    print(f"{digest[:16]}  {step}")
    print(f"battery {total.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
