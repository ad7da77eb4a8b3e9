"""hack_scan over a Ray Dataset: features made on the cluster, the single-process report exactly.

The session's local cluster (the ``ray`` fixture: 2 CPUs, files under tmp); skipped under
``WHILEAI_PURE=1`` and without the ray extra. Rows are shuffled so each ask is spread over
several blocks, and batches cut asks in the middle.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

import whileai.simulations as zps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
from bench_hack_scan import agent_rows
from bench_large import scan_rows

# Ray leaves its own log files and helper-process handles to the garbage collector: not ours.
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

ENDORSED = ["tool:lookup_order"]


def _shuffled(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = list(rows)
    random.Random(7).shuffle(rows)
    return rows


def _as_text(ray: Any, rows: list[dict[str, Any]], blocks: int) -> Any:
    """A dataset of JSON texts (nested steps kept as written), in ``blocks`` blocks."""
    items = [{"text": json.dumps(r)} for r in rows]
    return ray.data.from_items(items, override_num_blocks=blocks)


def test_text_rows_report_equals_one_process(ray: Any) -> None:
    from whileai.scale import hack_scan_dataset

    rows = _shuffled(scan_rows(40, 6))
    rows += [{"task_id": "ask1", "final_text": "no reward"}, {"final_text": "x", "reward": 1.0}]
    want = zps.hack_scan(rows, ENDORSED, n_perm=30, seed=3, top=40, progress=False)
    assert want["support"]["skipped"] == {"unjudged": 1, "invalid": 0, "no_task": 1}
    assert any(f["tier"] == "auto" for f in want["features"])
    dataset = _as_text(ray, rows, 5)
    got = hack_scan_dataset(dataset, ENDORSED, column="text", n_perm=30, seed=3, top=40,
                            batch_size=37, progress=False)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert dataset.context.execution_options.preserve_order is False  # put back after each pass


def test_agent_rows_report_equals_one_process(ray: Any) -> None:
    from whileai.scale import hack_scan_dataset

    rows = _shuffled(agent_rows(30, 6))
    features = {"long": lambda row: len(row.get("final_text", "")) > 120}
    kinds = {"search_docs": "write"}
    want = zps.hack_scan(rows, ENDORSED, features, n_perm=20, kinds=kinds, progress=False)
    assert want["regime"] in ("train", "reward_hack")
    assert want["n_features"] > 30
    assert {f["tier"] for f in want["features"]} >= {"hand", "auto"}
    got = hack_scan_dataset(_as_text(ray, rows, 4), ENDORSED, features, column="text",
                            n_perm=20, kinds=kinds, batch_size=41, progress=False)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_vocabulary_is_chosen_over_the_whole_pool(ray: Any) -> None:
    """A term in every row of one batch is no term of every row; ``top`` cuts the pooled ranking.

    Batch-local choices would keep ``zeta`` out (every row of the first block holds it) and cut
    a different top three.
    """
    from whileai.scale import hack_scan_dataset

    rows = []
    for ask in range(8):
        for r in range(4):
            words = ["zeta"] if ask < 2 or r % 2 else ["gamma"]
            words += ["delta"] * (ask % 3 == 0) + ["omega"] * (r == 0)
            rows.append({"scenario_id": f"a{ask}", "final_text": " ".join(words),
                         "reward": float(r % 2)})
    want = zps.hack_scan(rows, min_obs=2, n_perm=0, top=3, progress=False)
    names = {f["name"] for f in want["features"]} | {
        a for f in want["features"] for a in f["aliases"]}
    assert "contains:zeta" in names
    ds = ray.data.from_items(rows, override_num_blocks=4)
    got = hack_scan_dataset(ds, min_obs=2, n_perm=0, top=3, batch_size=8, progress=False)
    assert got == want


def test_no_mixed_asks_and_errors(ray: Any) -> None:
    from whileai.scale import hack_scan_dataset

    rows = [{"scenario_id": f"t{t}", "final_text": "ok", "reward": 0.0}
            for t in range(3) for _ in range(2)]
    ds = ray.data.from_items(rows, override_num_blocks=2)
    bad = {"bad": lambda row: "text"}  # never called: no ask has mixed rewards
    got = hack_scan_dataset(ds, None, bad, min_obs=2, progress=False)
    assert got == zps.hack_scan(rows, None, bad, min_obs=2, progress=False)
    assert got["cause"] == "no_mixed_asks"
    with pytest.raises(ValueError, match="alpha"):
        hack_scan_dataset(ds, alpha=1.5)
    mixed = [{**r, "reward": float(i % 2)} for i, r in enumerate(rows)]
    with pytest.raises(TypeError, match="bad"):
        hack_scan_dataset(ray.data.from_items(mixed), None, bad, min_obs=2, progress=False)


def test_asks_over_several_blocks_report_equals_one_process(ray: Any) -> None:
    # More asks than one block of the scan holds: the block partials are summed on the cluster,
    # each block's where its rows are, and added on the driver in block order.
    from whileai._pure.scan import BLOCK
    from whileai.scale import hack_scan_dataset

    rows = _shuffled(scan_rows(BLOCK + 300, 3))
    want = zps.hack_scan(rows, ENDORSED, n_perm=19, seed=5, progress=False)
    assert want["support"]["asks"] > BLOCK + 200  # mixed asks in both blocks
    assert any(f["aliases"] for f in want["features"])  # merged columns
    got = hack_scan_dataset(_as_text(ray, rows, 4), ENDORSED, column="text", n_perm=19, seed=5,
                            batch_size=700, progress=False)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
