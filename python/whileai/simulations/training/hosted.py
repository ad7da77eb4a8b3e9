"""Hosted training, serving and model listing: not part of the self-hosted platform.

The hosted service the spec describes (``zps.train``, ``zps.serve``, ``zps.models``) does not exist
for this package; ``whileai serve`` keeps data, traces and runs but trains nothing. These names
raise a clear error that points to the path that works: your own TRL trainer with
``zps.TrainerCallback`` and ``zps.HackMonitor`` (docs/training.md).
"""

from __future__ import annotations

from typing import Any, NoReturn

from whileai.errors import ConfigError

__all__ = ["HostedOnlyError", "models", "serve", "train"]

_HOW = (
    "train with your own trainer (TRL's SFTTrainer, GRPOTrainer or DPOTrainer) and report it "
    "with run = zps.training_run(name); trainer.add_callback(zps.TrainerCallback(run)); watch the "
    "reward with zps.HackMonitor (see docs/training.md)"
)


class HostedOnlyError(ConfigError, NotImplementedError):
    """A call that needs the hosted training service, which the self-hosted platform lacks."""


def _refuse(what: str) -> NoReturn:
    raise HostedOnlyError(f"zps.{what} needs hosted training, which whileai does not run: {_HOW}")


def train(*args: Any, **kwargs: Any) -> NoReturn:
    """Hosted training is not available; raises :class:`HostedOnlyError` with the way that is."""
    _refuse("train(...)")


def serve(*args: Any, **kwargs: Any) -> NoReturn:
    """Hosted serving is not available: serve the adapter with vLLM (``vllm:<model>@<url>``)."""
    _refuse("serve(...)")


def models(*args: Any, **kwargs: Any) -> NoReturn:
    """Hosted model listing is not available (nothing is hosted)."""
    _refuse("models()")
