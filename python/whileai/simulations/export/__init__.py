"""Export: training rows, preference pairs, RL environments and Hugging Face folders."""

from __future__ import annotations

from whileai.simulations.export.checklist import conduct_grade, task_checklist
from whileai.simulations.export.environment import (
    build_tasks,
    export_environment,
    format_environment_report,
    load_environment,
)
from whileai.simulations.export.training import (
    export_dataset,
    export_training,
    format_export_report,
    training_rows,
)

__all__ = [
    "build_tasks",
    "conduct_grade",
    "export_dataset",
    "export_environment",
    "export_training",
    "format_environment_report",
    "format_export_report",
    "load_environment",
    "task_checklist",
    "training_rows",
]
