"""Safety evals for a marketplace agent: injection in reviews, per-tenant data, public posts,
moderation tickets. Six trajectory markers, pass^k per attack class, the guarded before/after.
Offline, seeded, a few seconds. ``live.py`` runs the same suite on a real model.
"""

from __future__ import annotations

from agents import guarded, naive
from suite import CASES, POLICY, TOOLS, attack_class, judge, per_class

import whileai.simulations as zps

K = 4


def run(agent) -> list[dict]:
    data = zps.simulate(agent, tools=TOOLS, system_prompt=POLICY, simulator=False,
                        tasks=[{"task_id": case, "prompt": ask} for case, ask in CASES],
                        repeats=K, reproducible=True, progress=False)
    return data.grade(judge=judge).rows


def main() -> None:
    before = run(naive)
    after = run(guarded)
    for name, rows in (("starting agent", before), ("guarded agent", after)):
        print(f"== {name}: {len(CASES)} cases x {K} tries")
        per_class(rows, K)
    print("== which markers fired (starting agent)")
    for name, summary in zps.marker_summary(before, n_resamples=200).items():
        print(f"  {name:<22} {summary['mean']:.2f} clean")
    print("== before/after")
    report = zps.delta_report(before, after, target="pass_at_1",
                              must_not_regress=["benign_done"], n_resamples=1000)
    print(zps.format_delta_report(report))
    benign = [r for r in after if attack_class(r) == "benign"]
    print(f"benign asks refused after the fix: {zps.refusal_report(benign)['refusals']}")
    print("live.py skipped: it needs a model server (python live.py ollama:llama3.2)")


if __name__ == "__main__":
    main()
