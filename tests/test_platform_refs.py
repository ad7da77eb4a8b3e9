"""Every dataset call takes a ``ds_`` id or a name; unknown ones raise naming them."""

from __future__ import annotations

from pathlib import Path

import pytest

import whileai.simulations as zps
from platform_server import Server, require_server_extra
from whileai.cli import main
from whileai.errors import InputError
from whileai.platform import NotFoundError

require_server_extra()


def _rows(tag: str, n: int = 4) -> list[dict[str, object]]:
    return [{"scenario_id": f"{tag}{i // 2}", "prompt": f"{tag} ask {i}", "final_text": "ok",
             "reward": float(i % 2)} for i in range(n)]


def test_a_name_reaches_the_newest_set_of_that_name(platform_key: str) -> None:
    old = zps.push_rows(_rows("old"), "airline")
    new = zps.push_rows(_rows("new"), "airline")
    assert zps.pull("airline") == _rows("new")
    assert zps.pull(old["datasetId"]) == _rows("old")
    assert zps.preview("airline")["datasetId"] == new["datasetId"]
    assert zps.profile("airline")["rows"] == 4
    assert zps.update_dataset("airline", purpose="eval")["datasetId"] == new["datasetId"]
    assert zps.publish("airline", "support")["datasetId"] == new["datasetId"]
    assert zps.unpublish("airline")["public"] is False
    child = zps.push_rows(_rows("child"), "airline-v2", parent="airline")
    assert child["parentId"] == new["datasetId"]
    assert zps.delete_dataset("airline")["datasetId"] == new["datasetId"]
    assert zps.pull("airline") == _rows("old")  # the next newest of that name


def test_unknown_names_and_ids_are_named_in_the_error(platform_key: str) -> None:
    with pytest.raises(NotFoundError, match="no dataset named 'nope' on this account"):
        zps.pull("nope")
    with pytest.raises(NotFoundError, match="no dataset named 'nope'"):
        zps.push_rows(_rows("x"), "orphan", parent="nope")
    with pytest.raises(NotFoundError, match="ds_0123456789abcdef"):
        zps.preview("ds_0123456789abcdef")
    assert zps.datasets()["count"] == 0  # the refused push stored nothing


def test_without_a_key_only_ids_reach_public_sets(platform_key: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    entry = zps.push_rows(_rows("pub"), "public-set")
    zps.publish(entry["datasetId"], "demo")
    monkeypatch.delenv("WHILEAI_API_KEY")
    assert zps.pull(entry["datasetId"]) == _rows("pub")
    with pytest.raises(NotFoundError, match="reached by its ds_ id only"):
        zps.pull("public-set")


def test_load_traces_reads_a_dataset_id(platform_key: str) -> None:
    entry = zps.push_rows(_rows("tr"), "traces-set")
    traces = zps.load_traces(entry["datasetId"])
    assert [t["prompt"] for t in traces] == [r["prompt"] for r in _rows("tr")]
    with pytest.raises(NotFoundError, match="ds_0000000000000000"):
        zps.load_traces("ds_0000000000000000")


def test_file_readers_say_a_dataset_id_is_not_a_file(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"pull it first \(rows = zps.pull\('ds_1a2b'\)\)"):
        zps.load_rows("ds_1a2b")


def test_cli_pulls_by_name(platform_key: str, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    zps.push_rows(_rows("cli"), "cli-set")
    target = tmp_path / "out.jsonl"
    assert main(["pull", "cli-set", "-o", str(target)]) == 0
    assert f"wrote {target}" in capsys.readouterr().out
    assert list(zps.read_jsonl(target)) == _rows("cli")


def test_the_server_lists_by_name(platform_server: Server, platform_key: str) -> None:
    zps.push_rows(_rows("a"), "one")
    zps.push_rows(_rows("b"), "two")
    listing = zps.datasets()
    assert listing["count"] == 2
    import requests

    named = requests.get(platform_server.url + "/v1/datasets", params={"name": "two"},
                         headers={"Authorization": f"Bearer {platform_key}"}, timeout=30).json()
    assert [d["name"] for d in named["datasets"]] == ["two"]
    assert named["storageBytes"] == listing["storageBytes"]
