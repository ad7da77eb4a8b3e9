"""The tables of training runs: one row per run, its points and its events (migration 0002).

A run is found by ``(account_id, run_id)``, the id its client chose (migration 0009); its
points and events hang off its internal key ``runs.id``. A point or event is identified by
``(run key, seq)``: the client numbers them, so a batch sent twice is stored once.
"""

from __future__ import annotations

import sqlalchemy as sa

from whileai.server.store.tables import metadata

__all__ = ["run_events", "run_points", "runs"]

runs = sa.Table(
    "runs", metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(40), nullable=False, unique=True),  # internal (migration 0009)
    sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False,
              index=True),
    sa.Column("run_id", sa.String(40), nullable=False),  # the client's id, unique per account
    sa.Column("name", sa.String(300), nullable=False),
    sa.Column("dataset_id", sa.String(300), nullable=True),
    sa.Column("holdout_id", sa.String(300), nullable=True),
    sa.Column("base_model", sa.String(300), nullable=True),
    sa.Column("trainer", sa.String(100), nullable=True),
    sa.Column("total_steps", sa.Integer, nullable=True),
    sa.Column("config", sa.Text, nullable=True),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("summary", sa.Text, nullable=True),
    sa.Column("adapter", sa.Text, nullable=True),
    sa.Column("holdout_result", sa.Text, nullable=True),
    sa.Column("points", sa.Integer, nullable=False),
    sa.Column("last_step", sa.Integer, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("finished_at", sa.Float, nullable=True),
    sa.UniqueConstraint("account_id", "run_id", name="uq_runs_account_run"),
)

run_points = sa.Table(
    "run_points", metadata,
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("step", sa.Integer, nullable=False),
    sa.Column("time", sa.Float, nullable=True),
    sa.Column("metrics", sa.Text, nullable=False),
)

run_events = sa.Table(
    "run_events", metadata,
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("step", sa.Integer, nullable=True),
    sa.Column("time", sa.Float, nullable=True),
    sa.Column("body", sa.Text, nullable=False),
)
