"""The stop reasons of a run: one closed set, each value documented, quota errors mapped."""

from __future__ import annotations

from pathlib import Path

from whileai.errors import QuotaError
from whileai.simulations.models.client import ModelQuotaError
from whileai.simulations.play.stop import STOP_REASONS, quota_stop

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_stop_reason_is_in_the_docs_table() -> None:
    page = (DOCS / "simulate.md").read_text(encoding="utf-8")
    table = page.split("| value | the run stopped because |", 1)[1].split("\n\n", 1)[0]
    assert [r for r in STOP_REASONS if f"`{r}`" not in table] == []


def test_a_spent_quota_stops_with_its_role() -> None:
    assert quota_stop(ModelQuotaError("429", role="writer")) == "writer_quota_exceeded"
    assert quota_stop(ModelQuotaError("429", role="judge")) == "judge_quota_exceeded"
    assert quota_stop(QuotaError("429")) == "agent_quota_exceeded"
    assert {quota_stop(ModelQuotaError("429", role=r)) for r in ("agent", "writer", "judge")} \
        <= set(STOP_REASONS)
