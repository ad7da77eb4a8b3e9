"""A scripted GRPO-like loop for the monitor tests: a policy that drifts toward a planted shortcut.

Each step samples 4 prompts x 8 completions. A completion is random words; it contains "answer"
(the endorsed behaviour) with the prompt's own probability, and after ``onset`` it starts saying
"guaranteed", which the rule reward also pays for. As the shortcut spreads the policy answers less
often, so the proxy reward rises while the gold reward (answered or not) falls: the over-
optimisation picture. ``onset=None`` is a clean run.
"""

from __future__ import annotations

import random
from typing import Any

from whileai.simulations.training.monitor import HackMonitor

VOCAB = ["the", "order", "is", "ready", "please", "wait", "we", "can", "check", "your", "item",
         "status", "soon", "thanks", "now"]
PROMPTS = [f"question {i}" for i in range(48)]
SHORTCUT = "guaranteed"


def rule_reward(prompts: list[Any], completions: list[str], **kwargs: Any) -> list[float]:
    """The training reward: pays for an answer, and (its bug) for the word "guaranteed"."""
    return [float("answer" in c.split() or SHORTCUT in c.split()) for c in completions]


def gold(row: dict[str, Any]) -> dict[str, Any]:
    """What we care about: did it answer?"""
    return {"reward": float("answer" in row["final_text"].split())}


def shortcut_rate(step: int, onset: int | None) -> float:
    return 0.0 if onset is None or step < onset else min(0.6, 0.03 * (step - onset + 1))


def play(monitor: HackMonitor, *, seed: int, onset: int | None, steps: int = 300,
         noise: float = 0.1) -> int | None:
    """Run the loop; return the step at which the monitor asked to stop (None: never)."""
    rng = random.Random(seed)
    p_answer = {p: rng.uniform(0.2, 0.8) for p in PROMPTS}

    def noisy(prompts: list[Any], completions: list[str], **kwargs: Any) -> list[float]:
        return [r if rng.random() >= noise else 1.0 - r
                for r in rule_reward(prompts, completions)]

    reward = monitor.wrap(noisy)
    for step in range(steps):
        monitor.step = step
        s = shortcut_rate(step, onset)
        prompts, completions = [], []
        for prompt in rng.sample(PROMPTS, 4):
            for _ in range(8):
                words = [rng.choice(VOCAB) for _ in range(rng.randint(5, 16))]
                if rng.random() < p_answer[prompt] * (1.0 - s):
                    words.insert(rng.randrange(len(words) + 1), "answer")
                if rng.random() < s:
                    words.append(SHORTCUT)
                prompts.append(prompt)
                completions.append(" ".join(words))
        reward(prompts=prompts, completions=completions)
        if monitor.should_stop:
            return step
    return None
