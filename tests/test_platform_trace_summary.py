"""The per-task trace summary: kept equal to a full count through ingest, rebuilds and scores.

The cuts report reads ``trace_task_stats`` when no time or trace filter applies, and counts the
traces themselves when ``since`` is given: with a ``since`` wide enough to hold every trace the
two must agree, whatever happened to the traces in between. Runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import requests

import whileai.simulations as zps
from platform_server import fresh_database, require_server_extra
from whileai.platform import traces as wt

require_server_extra()


def messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def span(trace: str, span_id: str, start: int, **attrs: Any) -> dict[str, Any]:
    return {"traceId": trace, "spanId": span_id, "name": "chat m",
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1),
            "attributes": [{"key": k, "value": {"stringValue": str(v)}} for k, v in
                           attrs.items()]}


def send(url: str, key: str, spans: list[dict[str, Any]]) -> None:
    body = json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"spans": spans}]}]}).encode()
    reply = requests.post(f"{url}/v1/traces", data=body, timeout=10, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    assert reply.status_code == 200, reply.text


def ask(trace: str, n: int, scenario: str) -> dict[str, Any]:
    return span(trace, f"{n:016x}", 10, **{"gen_ai.agent.name": "sum-bot",
                                           "whileai.scenario_id": scenario,
                                           "gen_ai.input.messages": messages("user", "hi")})


def without_since(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "since"}


def test_summary_matches_a_full_count_through_rebuilds_and_corrections(
        platform_server: Any, platform_key: str) -> None:
    url, key = platform_server.url, platform_key
    ids = [f"{i + 1:032x}" for i in range(12)]
    # trace 0 has no scenario yet: its prompt ("yo") is its task
    unnamed = span(ids[0], f"{1:016x}", 10, **{"gen_ai.agent.name": "sum-bot",
                                                "gen_ai.input.messages": messages("user", "yo")})
    send(url, key, [unnamed] + [ask(t, i + 1, f"task-{i % 4}") for i, t in enumerate(ids) if i])
    send(url, key, [span("ee" * 16, "e" * 16, 5, **{"http.method": "GET"})])  # a raw trace
    wt.send_score(scores=[{"traceId": t, "value": float(i % 3 == 0)} for i, t in enumerate(ids)])
    wt.send_score(ids[1], 1.0)  # a correction: a fail becomes a pass
    wt.send_score(ids[2], 0.5, name="helpfulness")  # not the verdict: cuts do not count it
    assert wt.cuts(agent="sum-bot")["prompts"] == 5
    # a later span names trace 0's scenario: it moves to that task, and the summary with it
    send(url, key, [span(ids[0], "f" * 16, 1, **{"whileai.scenario_id": "task-moved"})])
    fast = wt.cuts(agent="sum-bot")
    full = wt.cuts(agent="sum-bot", since="3650d")  # a time filter: counted over the traces
    assert without_since(fast) == without_since(full)
    assert fast["prompts"] == 5  # "yo" is gone, "task-moved" came
    assert fast["runs"] == 12
    assert fast["scored"] == 12
    assert without_since(wt.cuts()) == without_since(wt.cuts(since="3650d"))
    listed = wt.list_traces()
    assert (listed["genai"], listed["raw"]) == (12, 1)


def test_a_trace_over_two_batches_equals_rows_from_otel(platform_server: Any,
                                                         platform_key: str) -> None:
    url, key = platform_server.url, platform_key
    trace = "ab" * 16
    first = [ask(trace, 1, "split")]
    second = [span(trace, "2" * 16, 20, **{"gen_ai.output.messages":
                                           messages("assistant", "bye")})]
    send(url, key, first)
    send(url, key, second)
    send(url, key, second)  # a re-sent batch changes nothing
    found = requests.get(f"{url}/v1/traces/{trace}", timeout=10,
                         headers={"Authorization": f"Bearer {key}"}).json()
    expected = zps.rows_from_otel({"resourceSpans": [{"scopeSpans": [{"spans": first + second}]}]})
    assert found["row"] == expected[0]
    assert found["row"]["final_text"] == "bye"
    assert wt.cuts(agent="sum-bot")["runs"] == 1


def test_the_migration_counts_traces_already_stored(tmp_path: Path) -> None:
    import sqlalchemy as sa
    from alembic import command
    from alembic.autogenerate import compare_metadata
    from alembic.config import Config
    from alembic.migration import MigrationContext

    from whileai.server.config import ServerConfig
    from whileai.server.services import trace_stats
    from whileai.server.store.db import _MIGRATIONS, open_engine
    from whileai.server.store.tables import accounts, metadata
    from whileai.server.store.trace_tables import trace_task_stats, traces

    config = ServerConfig(directory=tmp_path, database=fresh_database())
    engine = open_engine(config.database_url)
    alembic = Config()
    alembic.set_main_option("script_location", str(_MIGRATIONS))
    with engine.begin() as conn:
        alembic.attributes["connection"] = conn
        command.upgrade(alembic, "0003")
    with engine.begin() as conn:
        conn.execute(sa.insert(accounts).values(id="acct_1", name="a", tier="t",
                                                is_admin=False, created_at=0.0))
        conn.execute(sa.insert(traces), [
            {"account_id": "acct_1", "trace_id": f"{i:032x}", "agent": "bot" if i % 2 else None,
             "genai": i < 8, "spans": 1, "task": f"t{i % 3}" if i < 8 else None,
             "score": None if i % 4 == 3 else float(i % 2), "created_at": 0.0,
             "updated_at": 0.0} for i in range(10)])
    with engine.begin() as conn:
        alembic.attributes["connection"] = conn
        command.upgrade(alembic, "head")
    with engine.connect() as conn:  # the migrations make what the table definitions say
        context = MigrationContext.configure(conn)
        assert [d for d in compare_metadata(context, metadata) if "trace" in repr(d)] == []
    with engine.begin() as conn:
        migrated = sorted(tuple(r) for r in conn.execute(sa.select(trace_task_stats)))
        trace_stats.recount(conn, "acct_1")
        recounted = sorted(tuple(r) for r in conn.execute(sa.select(trace_task_stats)))
        assert migrated == recounted
        assert trace_stats.trace_counts(conn, "acct_1", None) == {True: 8, False: 2}
        assert trace_stats.task_stats(conn, "acct_1", "bot") == {
            "t0": (1, 0, 0), "t1": (2, 1, 1), "t2": (1, 1, 1)}
    engine.dispose()
