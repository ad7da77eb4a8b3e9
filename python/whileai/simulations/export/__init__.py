"""Export: training rows, preference pairs, RL environments and Hugging Face folders."""

from __future__ import annotations

from whileai.simulations.export.training import (
    export_dataset,
    export_training,
    format_export_report,
    training_rows,
)

__all__ = ["export_dataset", "export_training", "format_export_report", "training_rows"]
