"""Export: training rows, preference pairs, RL environments and Hugging Face folders."""

from __future__ import annotations

from whileai.simulations.export.checklist import conduct_grade, task_checklist
from whileai.simulations.export.environment import (
    build_tasks,
    export_environment,
    format_environment_report,
    load_environment,
)
from whileai.simulations.export.hf import format_hf_report, to_hf_folder
from whileai.simulations.export.preference import export_preference, format_preference_report
from whileai.simulations.export.training import (
    export_dataset,
    export_training,
    format_export_report,
    training_rows,
)
from whileai.simulations.export.trl import to_trl

__all__ = [
    "build_tasks",
    "conduct_grade",
    "export_dataset",
    "export_environment",
    "export_preference",
    "export_training",
    "format_environment_report",
    "format_export_report",
    "format_hf_report",
    "format_preference_report",
    "load_environment",
    "task_checklist",
    "to_hf_folder",
    "to_trl",
    "training_rows",
]
