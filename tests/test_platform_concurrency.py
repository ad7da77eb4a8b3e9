"""16 clients pushing and pulling 50 datasets at once: nothing lost, nothing mixed."""

from __future__ import annotations

import secrets
from concurrent.futures import ThreadPoolExecutor

import whileai.simulations as zps
from platform_server import Server, require_server_extra

require_server_extra()


def test_sixteen_clients_fifty_datasets(platform_server: Server) -> None:
    keys = [platform_server.key(f"crowd-{i}-{secrets.token_hex(3)}") for i in range(4)]
    url = platform_server.url

    def job(n: int) -> tuple[str, str, int]:
        key = keys[n % len(keys)]
        rows = [{"prompt": f"set {n} row {i}", "owner": n, "pad": "y" * (n * 13 % 400)}
                for i in range(100 + n)]
        entry = zps.push_rows(rows, f"set-{n}", api_key=key, base_url=url)
        assert zps.pull(entry["datasetId"], api_key=key, base_url=url) == rows
        return key, entry["datasetId"], len(rows)

    with ThreadPoolExecutor(max_workers=16) as pool:
        done = list(pool.map(job, range(50)))
    assert len({dataset_id for _, dataset_id, _ in done}) == 50
    for key in keys:
        listing = zps.datasets(api_key=key, base_url=url)
        mine = {(d["datasetId"], d["rows"]) for d in listing["datasets"]}
        assert mine == {(ds, n) for k, ds, n in done if k == key}
    for key, dataset_id, count in done[::7]:
        rows = zps.pull(dataset_id, api_key=key, base_url=url)
        assert len(rows) == count
        assert len({r["owner"] for r in rows}) == 1
