"""Rows to a Hugging Face dataset folder, read back by ``datasets``, and onto the platform.

Simulates and grades a small run, writes it as an HF folder (``to_hf_folder``: a train and a
test split, Parquet when pyarrow is there, and a dataset card), loads it back with
``datasets.load_dataset`` as anyone would, then starts a local ``whileai serve`` and brings the
train split in with ``import_hf`` and pulls it back, checking each row against what was written.

Run from this folder: ``python run.py``. Offline; needs the ``hf`` and ``server`` extras.
``--publish USER/REPO`` (with ``HF_TOKEN``) also pushes the dataset to the Hub.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import whileai.simulations as zps

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TOOLS = json.loads((EXAMPLES / "tools.json").read_text(encoding="utf-8"))
POLICY = (EXAMPLES / "policy.txt").read_text(encoding="utf-8")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def local_server(folder: Path) -> Iterator[tuple[str, str]]:
    """``whileai serve`` on a free loopback port with data in ``folder``: ``(url, key)``."""
    env = {k: v for k, v in os.environ.items() if k not in ("WHILEAI_DATABASE_URL",
                                                             "WHILEAI_API_KEY")}
    serve = [sys.executable, "-m", "whileai", "serve", "--dir", str(folder / "server")]
    key = subprocess.run([*serve, "--create-key", "recipes"], env=env, capture_output=True,
                         text=True, check=True, timeout=120).stdout.strip()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(folder / "server.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen([*serve, "--port", str(port)], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((folder / "server.log").read_text()[-2000:])
            with contextlib.suppress(urllib.error.URLError, ConnectionError), \
                    urllib.request.urlopen(f"{url}/health", timeout=2):
                break
            time.sleep(0.1)
        yield url, key
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def no_planted_mistake(row: dict[str, Any]) -> float:
    return 0.0 if row.get("seeded") else 1.0


def same(written: dict[str, Any], pulled: dict[str, Any]) -> bool:
    """Every field written comes back equal (a column another split had reads back as None)."""
    return {k: v for k, v in pulled.items() if v is not None} == written


def main() -> None:
    parser = argparse.ArgumentParser(description="rows to an HF folder and back")
    parser.add_argument("--publish", metavar="USER/REPO", default=None,
                        help="also push the imported dataset to this Hub repo with hf_publish "
                             "(needs HF_TOKEN and the network); default: skip")
    args = parser.parse_args()
    data = zps.simulate(zps.seeded_agent(TOOLS, rate=0.3, seed=4), tools=TOOLS,
                        system_prompt=POLICY, simulator=False, budget=24, repeats=2,
                        progress=False)
    graded = zps.run_judge(data, no_planted_mistake, progress=False)
    rows = [zps.export_row(r) for r in graded.rows]  # what leaves a run: no privileged block
    print(f"rows: {graded}")
    train = [r for r in rows if r["rollout_index"] == 0]
    test = [r for r in rows if r["rollout_index"] == 1]

    with tempfile.TemporaryDirectory(prefix="hf-") as tmp:
        work = Path(tmp)
        folder = work / "orders-hf"
        report = zps.to_hf_folder({"train": train, "test": test}, folder)
        print(zps.format_hf_report(report).replace(str(folder), folder.name))
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        print(f"folder: {', '.join(files)}")

        import datasets

        loaded = datasets.load_dataset(str(folder))
        print(f"load_dataset: {', '.join(f'{s} {len(loaded[s])}' for s in sorted(loaded))}, "
              f"columns {len(loaded['train'].column_names)}")
        back = loaded["train"][0]
        print(f"  steps come back as {type(back['steps']).__name__}, "
              f"reward {back['reward']}, privileged {'privileged' in back}")

        with local_server(work) as (url, key):
            os.environ["WHILEAI_BASE_URL"] = url
            entry = zps.import_hf(str(folder), split="train", name="orders-train", api_key=key)
            print(f"import_hf: {entry['rows']} rows -> dataset {entry['name']!r}")
            pulled = zps.pull(entry["datasetId"], api_key=key, base_url=url)
            matched = sum(same(a, b) for a, b in zip(train, pulled, strict=True))
            print(f"pulled back: {len(pulled)} rows, {matched} equal to the rows written "
                  "(every field, nested ones included)")
            listed = zps.datasets(api_key=key, base_url=url)["datasets"]
            print(f"on the account: {[(d['name'], d['rows']) for d in listed]}")
            if args.publish and os.environ.get("HF_TOKEN"):
                pushed = zps.hf_publish(entry["datasetId"], repo=args.publish, api_key=key)
                print(f"hf_publish: {pushed}")
            else:
                print("skipped hf_publish: it needs --publish USER/REPO, HF_TOKEN and the network")


if __name__ == "__main__":
    main()
