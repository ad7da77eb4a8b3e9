"""Training runs through a real ``whileai serve``: live upload, restart mid-run, folder import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

import whileai.simulations as zps
from platform_server import require_server_extra
from whileai.cli import main

require_server_extra()


@pytest.fixture
def account(platform_key: str) -> str:
    """A fresh account per test (conftest's ``platform_key``)."""
    return platform_key


def test_a_run_round_trips_through_the_server(account: str, tmp_path: Path) -> None:
    with zps.training_run("grpo-live", dataset="ds_x", total_steps=600,
                          config={"beta": 0.02}) as run:
        assert run.sender is not None
        run.sender.interval = 0.05
        for step in range(600):  # more than one 500-point batch
            run.log(step, reward=step / 600, kl=0.001 * step)
        run.note("halfway")
        run.holdout(0.4, 0.55)
    found = zps.get_run(run.id, dir=tmp_path / "elsewhere")  # not local: read from the server
    assert found["status"] == "done"
    assert found["name"] == "grpo-live"
    assert [p["step"] for p in found["series"]] == list(range(600))
    assert found["series"][300]["reward"] == 0.5
    assert found["config"] == {"beta": 0.02}
    assert found["holdout_result"]["verdict"] == "Better"
    assert [e["kind"] for e in found["events"]] == ["note", "holdout", "finish"]


def test_runs_survive_a_server_restart_mid_run(platform_server: Any, account: str) -> None:
    run = zps.training_run("restart")
    assert run.sender is not None
    run.sender.interval = run.sender.max_backoff = 0.05
    for step in range(100):
        run.log(step, loss=1.0)
    assert run.sender.flush(30)
    platform_server.stop(kill=True)
    for step in range(100, 250):  # the server is down: points wait in the folder
        run.log(step, loss=0.5)
    platform_server.start(keep_port=True)
    run.finish("done", flush_timeout=60)
    found = zps.get_run(run.id, dir="/nonexistent")
    steps = [p["step"] for p in found["series"]]
    assert steps == list(range(250))  # nothing lost, nothing twice
    assert found["status"] == "done"


def test_an_offline_folder_imports_once(platform_server: Any, account: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    with zps.training_run("offline", dir=tmp_path / "runs", server=False) as run:
        for step in range(7):
            run.log(step, loss=1.0 / (step + 1))
    folder = str(tmp_path / "runs" / run.id)
    assert main(["runs", "import", folder]) == 0
    assert "sent 7 points and 1 events" in capsys.readouterr().out
    assert main(["runs", "import", folder]) == 0  # nothing new the second time
    assert "sent 0 points and 0 events" in capsys.readouterr().out
    (tmp_path / "runs" / run.id / "sent.json").unlink()  # forget the cursor: resend everything
    assert main(["runs", "import", folder]) == 0
    capsys.readouterr()
    found = zps.get_run(run.id, dir="/nonexistent")
    assert len(found["series"]) == 7
    assert found["status"] == "done"


def test_plain_http_and_account_isolation(platform_server: Any, account: str) -> None:
    url = platform_server.url + "/v1/runs"
    auth = {"Authorization": f"Bearer {account}"}
    made = requests.post(url, json={"name": "curl-run", "total_steps": 3}, headers=auth,
                         timeout=10).json()
    run_id = made["runId"]
    points = {"points": [{"step": 1, "loss": 1.2, "lr": 1e-4}, {"step": 2, "loss": 1.0}]}
    assert requests.post(f"{url}/{run_id}/log", json=points, headers=auth,
                         timeout=10).json() == {"stored": 2, "skipped": 0}
    bad = requests.post(f"{url}/{run_id}/log", json={"points": [{"step": 3, "loss": "x"}]},
                        headers=auth, timeout=10)
    assert bad.status_code == 400
    assert "points[0]: metric 'loss'" in bad.json()["message"]
    big = requests.post(f"{url}/{run_id}/log", json={"points": [{"step": 1}] * 501},
                        headers=auth, timeout=10)
    assert big.status_code == 413
    done = requests.post(f"{url}/{run_id}/finish", json={"status": "done"}, headers=auth,
                         timeout=10).json()
    assert done["status"] == "done"
    assert done["points"] == 2
    other = {"Authorization": f"Bearer {platform_server.key('someone-else')}"}
    assert requests.get(f"{url}/{run_id}", headers=other, timeout=10).status_code == 404
    assert requests.get(url, headers=other, timeout=10).json()["total"] == 0
    assert requests.get(url, timeout=10).status_code == 401
    listed = json.loads(requests.get(url, headers=auth, timeout=10).text)
    assert run_id in [r["runId"] for r in listed["runs"]]
