"""Random JSON, numbers and strings at every route of a real server's OpenAPI document.

Each route gets a bounded number of generated requests: path parameters that name real
resources of the account or are junk, query values and JSON bodies built from the route's own
schema but filled with random values (huge and negative numbers, NaN, odd strings, wrong
types), or random JSON of any shape. Every answer must be below 500, and an answer in the 4xx
range must leave the stored state exactly as it was (every table of the database and the
folder of dataset parts).
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from platform_server import Server, require_server_extra, start_server

require_server_extra()
hypothesis = pytest.importorskip("hypothesis")
import sqlalchemy as sa  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("WHILEAI_FUZZ_EXAMPLES", "12"))  # per route


@dataclass
class Target:
    """The server, a key of an account with some of everything, and its resources' ids."""

    server: Server
    key: str
    ids: dict[str, list[str]]
    engine: sa.Engine
    tables: sa.MetaData
    routes: list[tuple[str, str, dict[str, Any]]]
    spec: dict[str, Any]


def _database_url(server: Server) -> str:
    if server.database:
        return server.database.replace("postgresql://", "postgresql+psycopg://", 1)
    return f"sqlite:///{server.directory / 'whileai.db'}"


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    server = start_server(tmp_path_factory.mktemp("fuzz"), "--max-request-bytes", "200000")
    engine = sa.create_engine(_database_url(server))
    try:
        key = server.key("fuzzed")
        auth = {"Authorization": f"Bearer {key}"}
        ds = requests.post(f"{server.url}/v1/datasets", params={"name": "set", "agent": "bot"},
                           data=b'{"prompt": "p", "reward": 1.0}\n', headers=auth,
                           timeout=30).json()["datasetId"]
        run = requests.post(f"{server.url}/v1/runs", json={"name": "r"}, headers=auth,
                            timeout=30).json()["runId"]
        span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat",
                "attributes": [{"key": "gen_ai.agent.name", "value": {"stringValue": "bot"}}]}
        requests.post(f"{server.url}/v1/traces", headers={**auth,
                                                          "Content-Type": "application/json"},
                      data=json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}),
                      timeout=30)
        spec = requests.get(f"{server.url}/openapi.json", timeout=30).json()
        routes = [(method.upper(), path, op) for path, ops in spec["paths"].items()
                  for method, op in ops.items()]
        tables = sa.MetaData()
        tables.reflect(engine)
        yield Target(server=server, key=key, spec=spec, engine=engine, tables=tables,
                     routes=routes,
                     ids={"dataset_id": [ds], "run_id": [run], "trace_id": ["ab" * 16],
                          "name": ["bot"], "index": ["0"]})
    finally:
        engine.dispose()
        server.stop()


def stored_state(target: Target) -> str:
    """A digest of every row of every table and of the part files' names and sizes."""
    digest = hashlib.sha256()
    with target.engine.connect() as conn:
        for name in sorted(target.tables.tables):
            table = target.tables.tables[name]
            rows = sorted(repr(tuple(r)) for r in conn.execute(sa.select(table)))
            digest.update(f"{name}:{len(rows)}:{'|'.join(rows)}".encode())
    parts = target.server.directory / "parts"
    for path in sorted(parts.rglob("*")):
        if path.is_file():
            digest.update(f"{path.relative_to(parts)}:{path.stat().st_size}".encode())
    return digest.hexdigest()


# Values that break naive code: huge, negative, fractional, special, wrong type.
numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30), st.sampled_from([0, -1, 2**31, 2**63,
                                                                          2**64, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True))
strings = st.one_of(st.text(max_size=40), st.sampled_from(
    ["", "9" * 320, "1e20", "nan", "-1", "\x00", "all", "7d", "ds_" + "0" * 24, "../x",
     "<script>", "null", "x" * 400]))
scalars = st.one_of(st.none(), st.booleans(), numbers, strings)
any_json = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(strings, inner, max_size=4)), max_leaves=12)


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        found: dict[str, Any] = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            found = found[part]
        node = found
    return node


def shaped(spec: dict[str, Any], schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """An object with the schema's field names (some left out), each holding random JSON."""
    schema = _resolve(spec, schema)
    fields = schema.get("properties") or {}
    if not fields:
        return any_json
    return st.fixed_dictionaries({}, optional=dict.fromkeys(fields, any_json))


@st.composite
def requests_for(draw: st.DrawFn, target: Target, method: str, path: str,
                 op: dict[str, Any]) -> dict[str, Any]:
    url = path
    query: dict[str, Any] = {}
    for param in op.get("parameters", []):
        name = param["name"]
        if param["in"] == "path":
            value = draw(st.one_of(st.sampled_from(target.ids.get(name, ["x"])),
                                   strings.filter(bool), numbers.map(str)))
            url = url.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
        elif draw(st.booleans()):
            query[name] = draw(st.one_of(strings, numbers.map(str)))
    body: bytes | None = None
    content = (op.get("requestBody") or {}).get("content", {}).get("application/json")
    if content is not None:
        value = draw(st.one_of(shaped(target.spec, content["schema"]), any_json))
        body = json.dumps(value).encode()
    elif method in ("POST", "PUT", "PATCH") and draw(st.booleans()):
        lines = draw(st.lists(any_json, max_size=3))
        body = b"\n".join(json.dumps(v).encode() for v in lines)
    headers = {"Content-Type": "application/json"}
    if draw(st.integers(0, 9)):  # mostly with the key
        headers["Authorization"] = f"Bearer {target.key}"
    return {"method": method, "url": target.server.url + url, "params": query,
            "data": body, "headers": headers}


def test_no_route_answers_500_or_changes_anything_on_4xx(target: Target) -> None:
    for method, path, op in target.routes:
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(request=requests_for(target, method, path, op))
        def check(request: dict[str, Any]) -> None:
            before = stored_state(target)
            answer = requests.request(timeout=60, **request)
            assert answer.status_code < 500, (request, answer.status_code, answer.text[:500])
            if 400 <= answer.status_code < 500:
                assert stored_state(target) == before, (request, answer.text[:300])

        check()
