"""Sample completions from the live policy inside a trainer (needs torch; the core never does).

``HackMonitor`` uses this as its default holdout sampler when it is added as a trainer callback
and no ``sampler=`` was given: transformers passes the model and its tokenizer to every event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["model_sampler"]


def model_sampler(model: Any, tokenizer: Any, *, max_new_tokens: int = 256,
                  temperature: float = 1.0) -> Callable[[list[str]], Sequence[str]]:
    """``prompts -> completions`` by ``model.generate`` (sampling, no gradient)."""

    def sample(prompts: list[str]) -> list[str]:
        import torch  # type: ignore[import-not-found]  # only reached inside a torch trainer

        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                batch = tokenizer(prompts, return_tensors="pt", padding=True).to(model.device)
                out = model.generate(**batch, do_sample=True, temperature=temperature,
                                     max_new_tokens=max_new_tokens)
            new = out[:, batch["input_ids"].shape[1]:]
            return list(tokenizer.batch_decode(new, skip_special_tokens=True))
        finally:
            if was_training:
                model.train()

    return sample
