"""The viewer's sources, index and label store without a browser (the app in process).

What ``whileai view`` reads (JSONL, gzip under any name, a Hugging Face folder, a
``SimulationData.save``), how the index filters and counts, that privileged context shows
only with ``--show-privileged``, and that the labels file is what ``attach_labels`` reads.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps
from platform_server import require_server_extra

require_server_extra()

from fastapi.testclient import TestClient  # noqa: E402

from whileai.errors import ConfigError, RowError  # noqa: E402
from whileai.server.pages.labels import kappa_interval  # noqa: E402
from whileai.server.pages.local import viewer_app  # noqa: E402
from whileai.server.pages.rowindex import Query, build_index  # noqa: E402
from whileai.server.pages.rowsource import open_local  # noqa: E402


def _client(app: Any) -> TestClient:
    """The app in process, as a browser on the viewer's own address reaches it."""
    return TestClient(app, base_url="http://127.0.0.1:7000")


def _rows(n: int = 12) -> list[dict[str, Any]]:
    return [{"scenario_id": f"t{i // 3}", "rollout_index": i % 3, "prompt": f"ask {i // 3}",
             "final_text": "shipped" if i % 2 else "pending", "reward": float(i % 2),
             "faults": [{"tool": "get", "kind": "timeout", "call": 0}] if i % 4 == 0 else [],
             "steps": [{"tool": "get", "arguments": {}, "result": {"status": "ok"}}]}
            for i in range(n)]


def test_jsonl_gzip_and_a_folder_index_the_same_rows(tmp_path: Path) -> None:
    rows = _rows()
    plain = tmp_path / "rows.jsonl"
    zps.write_jsonl(plain, rows)
    zipped = tmp_path / "rows.data"  # gzip by its bytes, whatever the name
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    folder = tmp_path / "hf"
    zps.to_hf_folder({"train": rows[:8], "test": rows[8:]}, folder, engine="jsonl")
    for path in (plain, zipped, folder):
        source = open_local(path)
        assert len(source.index) == len(rows)
        assert sorted(source.index.row(i)["final_text"] for i in range(len(rows))) == sorted(
            r["final_text"] for r in rows)
    splits = open_local(folder).index.query(Query()).counts["split"]
    assert splits == {"test": 4, "train": 8}
    assert open_local(folder).labels == folder / "labels.jsonl"
    assert open_local(plain).labels == tmp_path / "rows.labels.jsonl"


def test_a_simulation_save_opens(tmp_path: Path) -> None:
    from _tools import TOOLS

    data = zps.simulate(zps.seeded_agent(TOOLS), tools=TOOLS, system_prompt="Help.",
                        simulator=False, budget=6, progress=False)
    source = open_local(data.save(tmp_path / "sim.jsonl"))
    assert len(source.index) == 6
    assert source.index.row(0)["prompt"] == data.rows[0]["prompt"]


def test_bad_sources_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        open_local(tmp_path / "missing.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"no \.jsonl"):
        open_local(tmp_path / "empty")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "a"}\n\n{oops\n')
    with pytest.raises(RowError, match=r"bad.jsonl: line 3: not valid JSON"):
        open_local(bad)


def test_counts_say_what_ticking_a_value_would_leave() -> None:
    index = build_index([json.dumps(r).encode() for r in _rows()])
    everything = index.query(Query())
    assert everything.counts["fault"] == {"none": 9, "timeout": 3}
    assert everything.counts["outcome"] == {"fail": 6, "pass": 6}
    timeouts = index.query(Query(facets={"fault": ("timeout",)}))
    assert timeouts.total == 3
    # the facet's own counts ignore its own filter; the others count within it
    assert timeouts.counts["fault"] == {"none": 9, "timeout": 3}
    assert timeouts.counts["outcome"] == {"fail": 3, "pass": 0}
    either = index.query(Query(facets={"fault": ("timeout", "none")}))
    assert either.total == 12
    found = index.query(Query(text="SHIPPED", sort="task", descending=True, size=2, page=1))
    assert found.total == 6
    assert found.page == (7, 5)  # by task then rollout, reversed: 11, 9 | 7, 5 | 3, 1
    assert index.siblings(0) == (1, 2)
    with pytest.raises(RowError, match="unknown sort"):
        index.query(Query(sort="nope"))
    with pytest.raises(RowError, match="out of range"):
        index.row(12)


def test_privileged_context_shows_only_when_asked(tmp_path: Path) -> None:
    row = _rows(1)[0] | {"privileged": {"hidden_state": "the secret record"}}
    path = tmp_path / "rows.jsonl"
    zps.write_jsonl(path, [row])
    plain = _client(viewer_app(path)).get("/datasets/local/rows/0")
    shown = _client(viewer_app(path, show_privileged=True)).get("/datasets/local/rows/0")
    assert plain.status_code == shown.status_code == 200
    assert "the secret record" not in plain.text
    assert "the secret record" in shown.text


def test_labels_are_what_attach_labels_reads(tmp_path: Path) -> None:
    rows = _rows()
    path = tmp_path / "rows.jsonl"
    zps.write_jsonl(path, rows)
    client = _client(viewer_app(path, annotator="ana"))
    assert client.post("/datasets/local/rows/1/label", json={"value": 0}).status_code == 200
    assert client.post("/datasets/local/rows/1/label",
                       json={"value": 1, "note": "ok"}).status_code == 200
    assert client.post("/datasets/local/rows/2/label", data={"value": "0", "via": "form"},
                       follow_redirects=False).status_code == 303
    refused = client.post("/datasets/local/rows/3/label", json={"value": 0.5})
    assert refused.status_code == 400
    assert "1 (pass) or 0 (fail)" in refused.json()["message"]
    assert client.post("/datasets/local/rows/99/label", json={"value": 1}).status_code == 400
    labelled, report = zps.attach_labels(rows, str(tmp_path / "rows.labels.jsonl"))
    assert report["matched"] == 3
    assert (labelled[1]["gold_reward"], labelled[1]["label_source"]) == (1.0, "ana")
    assert labelled[2]["gold_reward"] == 0.0
    assert "gold_reward" not in labelled[3]
    page = client.get("/datasets/local/agreement").text
    assert "2 rows carry both" in page
    assert client.get("/datasets/local/labels.jsonl").text.count("\n") == 3
    assert client.get("/datasets/other/rows").status_code == 404


def test_kappa_interval_matches_the_textbook_standard_error() -> None:
    # po = 0.9, pe = 0.505, kappa = 0.798, se = sqrt(.09 / (100 * .495^2)) = 0.0606
    assert kappa_interval(40, 5, 5, 50) == (0.679, 0.917)
    assert kappa_interval(10, 0, 0, 0) is None  # one class: kappa undefined
    assert kappa_interval(0, 0, 0, 0) is None


def test_the_cli_refuses_a_bad_port(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from whileai.cli import main

    assert main(["view", str(tmp_path / "x.jsonl"), "--port", "70000", "--no-browser"]) == 2
    assert "--port must be 0 to 65535" in capsys.readouterr().err


def test_a_big_index_is_built_in_the_background_and_a_failed_one_retried() -> None:
    import threading

    from whileai.server.pages.indexcache import IndexCache

    cache = IndexCache(kept=2, inline_rows=10)
    gate = threading.Event()

    def slow() -> str:
        gate.wait(30)
        return "big index"

    assert cache.get("big", slow, rows=11) is None  # building: the page says so
    assert cache.get("big", slow, rows=11) is None
    gate.set()
    cache.wait("big", timeout=30)
    assert cache.get("big", slow, rows=11) == "big index"

    def broken() -> str:
        raise RowError("part 3 is missing")

    with pytest.raises(RowError, match="part 3"):
        cache.get("bad", broken, rows=5)
    assert cache.get("bad", lambda: "fixed", rows=5) == "fixed"  # the failure was not kept
    cache.get("third", lambda: "x", rows=5)  # kept=2: the oldest ("big") goes
    assert cache.get("big", lambda: "rebuilt", rows=5) == "rebuilt"


def test_the_viewer_answers_only_loopback_and_its_own_origin(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    zps.write_jsonl(path, _rows(2))
    app = viewer_app(path)
    rebound = TestClient(app, base_url="http://evil.example:7000")
    assert rebound.get("/datasets/local/rows").status_code == 403  # a DNS-rebinding page
    client = _client(app)
    assert client.get("/datasets/local/rows").status_code == 200
    posted = client.post("/datasets/local/rows/0/label", json={"value": 1},
                         headers={"Origin": "http://evil.example"})
    assert posted.status_code == 403
    assert "not from http://evil.example" in posted.text
    assert not (tmp_path / "rows.labels.jsonl").exists()
    own = client.post("/datasets/local/rows/0/label", json={"value": 1},
                      headers={"Origin": "http://127.0.0.1:7000"})
    assert own.status_code == 200
