"""whileai.simulations: simulate, grade, measure, clean, select and export (``import ... as zps``).

The public surface is re-exported here; internals live in stage folders and may move.
"""

from __future__ import annotations

from whileai.platform import (
    agents,
    catalog,
    create_key,
    cut,
    cuts,
    datasets,
    delete_dataset,
    delete_empty_datasets,
    format_cuts,
    import_hf,
    issue_delegated_credential,
    list_keys,
    list_traces,
    preview,
    profile,
    publish,
    pull,
    purge_agent,
    push_file,
    push_rows,
    refresh_delegated_credential,
    register_agent,
    revoke_key,
    send_score,
    unpublish,
    update_dataset,
)
from whileai.rows.check import check_rows, format_row_check
from whileai.rows.jsonl import load_rows, read_jsonl
from whileai.rows.jsonl_write import JsonlAppender, write_jsonl
from whileai.rows.outbound import (
    conversation,
    export_row,
    holds_privileged,
    outbound,
    scrub,
    task_key,
)
from whileai.rows.schema import (
    SCHEMA_VERSION,
    Calibration,
    Judgment,
    Marker,
    Rollout,
    RowParts,
    Task,
    calibration_of,
    from_row,
    row_problems,
    row_schema,
    schema_version_of,
    to_row,
    validate,
)
from whileai.simulations.agent.spec import inspect
from whileai.simulations.aliases import install as _install_aliases
from whileai.simulations.clean.decontam import decontaminate, format_decontamination
from whileai.simulations.clean.decontam_index import EvalIndex, build_eval_index
from whileai.simulations.clean.grounding import (
    format_grounding_report,
    grounding_report,
    mark_grounding,
    ungrounded_arguments,
)
from whileai.simulations.clean.hack_report import (
    format_hack_scan,
    format_hack_scan_diff,
    hack_scan_diff,
)
from whileai.simulations.clean.hack_scan import hack_scan
from whileai.simulations.clean.leak import format_leak_report, leak_report
from whileai.simulations.clean.leakage import (
    drop_leaky_rows,
    format_leakage_report,
    leakage_report,
    near_duplicate_prompts,
)
from whileai.simulations.clean.markers import (
    STOCK_MARKERS,
    behavioral_markers,
    mark_rows,
    row_markers,
)
from whileai.simulations.clean.style import format_style_report, style_markers, style_report
from whileai.simulations.clean.trace_flags import (
    format_trace_flag_report,
    trace_flag_report,
    trace_flags,
    trace_markers,
)
from whileai.simulations.data import SimulationData
from whileai.simulations.export import (
    build_tasks,
    conduct_grade,
    export_dataset,
    export_environment,
    export_preference,
    export_training,
    format_environment_report,
    format_export_report,
    format_hf_report,
    format_preference_report,
    load_environment,
    task_checklist,
    to_hf_folder,
    to_trl,
    training_rows,
)
from whileai.simulations.export.hub import hf_publish, hf_publish_run, hf_status
from whileai.simulations.generate.diversity import novelty
from whileai.simulations.generate.seeded import SEEDED_KINDS, seeded_agent
from whileai.simulations.ingest import (
    FAULT_TO_AXIS,
    REWARD_KEYS,
    dimensions_from_traces,
    flaw_rows,
    format_trace_report,
    infer_harness,
    load_traces,
    mine_traces,
    opening_share,
    rows_from_otel,
    tools_from_traces,
    trace_report,
)
from whileai.simulations.judge.benchmark import benchmark_report, format_benchmark, run_benchmark
from whileai.simulations.judge.judging import evaluate, judge_row, run_judge
from whileai.simulations.judge.llm_judge import grade
from whileai.simulations.judge.llm_rubrics import rubric_judge, write_rubrics
from whileai.simulations.judge.probes import judge_pairs, judge_probes
from whileai.simulations.judge.scored import ScoredData
from whileai.simulations.judge.specs import Spec, load_spec, stamp_spec
from whileai.simulations.judge.trust import attach_labels, judge_agreement, refusal_report
from whileai.simulations.judge.trust_report import format_judge_trust, judge_trust
from whileai.simulations.measure.compare import (
    compare_runs,
    format_compare,
    marker_summary,
    metric_summary,
)
from whileai.simulations.measure.curriculum import curriculum, format_curriculum, retire_solved
from whileai.simulations.measure.delta import delta_report, eval_variance, format_delta_report
from whileai.simulations.measure.passat import PassAt, pass_at
from whileai.simulations.measure.power import detectable_effect, holdout_size
from whileai.simulations.models.spec import local_model
from whileai.simulations.play.sizing import format_recommendation, recommend
from whileai.simulations.report.html import report_html
from whileai.simulations.selection.gate import calibrate, publish_gate
from whileai.simulations.selection.holdout import split_pseudo_production
from whileai.simulations.selection.hygiene import (
    DEFAULT_BAND,
    HACK_THRESHOLD,
    dedupe_groups,
    group_signal,
    length_report,
    reward_correlations,
    trim_out_of_band,
    trim_unanimous_groups,
)
from whileai.simulations.selection.optimize import optimize, select_for_rl, select_for_sft
from whileai.simulations.selection.pairs import build_preference_pairs
from whileai.simulations.selection.rank import rank
from whileai.simulations.selection.stage import STAGES, stage_of, stage_report, stamp_stage
from whileai.simulations.simulation import simulate, simulate_from_traces
from whileai.simulations.training.callback import TrainerCallback
from whileai.simulations.training.hosted import models, serve, train
from whileai.simulations.training.logprobs import (
    format_logprob_report,
    logprob_report,
    mean_kl,
    staleness_report,
)
from whileai.simulations.training.monitor import HackMonitor
from whileai.simulations.training.reference import reference_logprobs
from whileai.simulations.training.run import TrainingRun, training_run
from whileai.simulations.training.runs import (
    attach_delta,
    attach_holdout,
    format_hack_monitor,
    format_run,
    get_run,
    list_runs,
    reward_model,
)
from whileai.simulations.world import World, current_rollout, world

from whileai.simulations import verify  # isort: skip  # the verifiers as ``zps.verify``

__all__: list[str] = [
    "DEFAULT_BAND",
    "FAULT_TO_AXIS",
    "HACK_THRESHOLD",
    "REWARD_KEYS",
    "SCHEMA_VERSION",
    "SEEDED_KINDS",
    "STAGES",
    "STOCK_MARKERS",
    "Calibration",
    "EvalIndex",
    "HackMonitor",
    "JsonlAppender",
    "Judgment",
    "Marker",
    "PassAt",
    "Rollout",
    "RowParts",
    "ScoredData",
    "SimulationData",
    "Spec",
    "Task",
    "TrainerCallback",
    "TrainingRun",
    "World",
    "agents",
    "attach_delta",
    "attach_holdout",
    "attach_labels",
    "behavioral_markers",
    "benchmark_report",
    "build_eval_index",
    "build_preference_pairs",
    "build_tasks",
    "calibrate",
    "calibration_of",
    "catalog",
    "check_rows",
    "compare_runs",
    "conduct_grade",
    "conversation",
    "create_key",
    "current_rollout",
    "curriculum",
    "cut",
    "cuts",
    "datasets",
    "decontaminate",
    "dedupe_groups",
    "delete_dataset",
    "delete_empty_datasets",
    "delta_report",
    "detectable_effect",
    "dimensions_from_traces",
    "drop_leaky_rows",
    "eval_variance",
    "evaluate",
    "export_dataset",
    "export_environment",
    "export_preference",
    "export_row",
    "export_training",
    "flaw_rows",
    "format_benchmark",
    "format_compare",
    "format_curriculum",
    "format_cuts",
    "format_decontamination",
    "format_delta_report",
    "format_environment_report",
    "format_export_report",
    "format_grounding_report",
    "format_hack_monitor",
    "format_hack_scan",
    "format_hack_scan_diff",
    "format_hf_report",
    "format_judge_trust",
    "format_leak_report",
    "format_leakage_report",
    "format_logprob_report",
    "format_preference_report",
    "format_recommendation",
    "format_row_check",
    "format_run",
    "format_style_report",
    "format_trace_flag_report",
    "format_trace_report",
    "from_row",
    "get_run",
    "grade",
    "grounding_report",
    "group_signal",
    "hack_scan",
    "hack_scan_diff",
    "hf_publish",
    "hf_publish_run",
    "hf_status",
    "holdout_size",
    "holds_privileged",
    "import_hf",
    "infer_harness",
    "inspect",
    "issue_delegated_credential",
    "judge_agreement",
    "judge_pairs",
    "judge_probes",
    "judge_row",
    "judge_trust",
    "leak_report",
    "leakage_report",
    "length_report",
    "list_keys",
    "list_runs",
    "list_traces",
    "load_environment",
    "load_rows",
    "load_spec",
    "load_traces",
    "local_model",
    "logprob_report",
    "mark_grounding",
    "mark_rows",
    "marker_summary",
    "mean_kl",
    "metric_summary",
    "mine_traces",
    "models",
    "near_duplicate_prompts",
    "novelty",
    "opening_share",
    "optimize",
    "outbound",
    "pass_at",
    "preview",
    "profile",
    "publish",
    "publish_gate",
    "pull",
    "purge_agent",
    "push_file",
    "push_rows",
    "rank",
    "read_jsonl",
    "recommend",
    "reference_logprobs",
    "refresh_delegated_credential",
    "refusal_report",
    "register_agent",
    "report_html",
    "retire_solved",
    "revoke_key",
    "reward_correlations",
    "reward_model",
    "row_markers",
    "row_problems",
    "row_schema",
    "rows_from_otel",
    "rubric_judge",
    "run_benchmark",
    "run_judge",
    "schema_version_of",
    "scrub",
    "seeded_agent",
    "select_for_rl",
    "select_for_sft",
    "send_score",
    "serve",
    "simulate",
    "simulate_from_traces",
    "split_pseudo_production",
    "stage_of",
    "stage_report",
    "staleness_report",
    "stamp_spec",
    "stamp_stage",
    "style_markers",
    "style_report",
    "task_checklist",
    "task_key",
    "to_hf_folder",
    "to_row",
    "to_trl",
    "tools_from_traces",
    "trace_flag_report",
    "trace_flags",
    "trace_markers",
    "trace_report",
    "train",
    "training_rows",
    "training_run",
    "trim_out_of_band",
    "trim_unanimous_groups",
    "ungrounded_arguments",
    "unpublish",
    "update_dataset",
    "validate",
    "verify",
    "world",
    "write_jsonl",
    "write_rubrics",
]

_install_aliases()  # the module paths the product documents name (aliases.py)
