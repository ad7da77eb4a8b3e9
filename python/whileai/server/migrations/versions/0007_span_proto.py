"""Protobuf spans stored as received: ``trace_spans.proto`` and ``trace_spans.agent``.

A span that came over OTLP/protobuf was re-encoded as OTLP/JSON to be stored, which cost the
receiver about a fifth of its time a span; now its protobuf bytes are stored as they came
(``body`` is empty) and read back into the same OTLP/JSON shape when a trace is rebuilt or
shown. The agent a span names (from its own or its resource's ``gen_ai.agent.name``) moves out
of the JSON body (``whileaiAgent``) into its own column, so protobuf spans keep it too; bodies
stored earlier still carry it and are read as before.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the two columns (NULL for every span stored so far)."""
    with op.batch_alter_table("trace_spans") as batch:
        batch.add_column(sa.Column("proto", sa.LargeBinary, nullable=True))
        batch.add_column(sa.Column("agent", sa.String(200), nullable=True))


def downgrade() -> None:
    """Write the protobuf spans and the agents back into JSON bodies, then drop the columns."""
    from whileai.server.services.otlp import proto_body

    conn = op.get_bind()
    spans = sa.table("trace_spans", sa.column("account_id"), sa.column("trace_id"),
                     sa.column("span_id"), sa.column("body"), sa.column("proto"),
                     sa.column("agent"))
    changed = conn.execute(sa.select(spans).where(
        sa.or_(spans.c.proto.is_not(None), spans.c.agent.is_not(None)))).all()
    for row in changed:
        body = proto_body(row.proto) if row.proto is not None else json.loads(row.body)
        body.pop("traceId", None)
        body.pop("spanId", None)
        if row.agent:
            body["whileaiAgent"] = row.agent
        conn.execute(sa.update(spans).where(
            spans.c.account_id == row.account_id, spans.c.trace_id == row.trace_id,
            spans.c.span_id == row.span_id).values(body=json.dumps(body, separators=(",", ":"))))
    with op.batch_alter_table("trace_spans") as batch:
        batch.drop_column("agent")
        batch.drop_column("proto")
