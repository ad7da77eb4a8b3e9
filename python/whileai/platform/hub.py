"""Hugging Face in and out: ``import_hf`` brings a split onto the platform as rows; ``hf_publish``,
``hf_publish_run`` and ``hf_status`` talk to the Hub with your own token.

``import_hf`` reads whatever ``datasets.load_dataset`` reads (a Hub repo, or a local folder or
file of Parquet, JSONL, CSV or Arrow), maps the columns to row-schema fields, and pushes the rows
(the server profiles them). It runs on the client, so ``wait``/``timeout``/``poll`` have nothing
to wait for; they are accepted for the spec's call form.

The ``hf_*`` calls need a live Hub account: they use ``huggingface_hub`` with ``HF_TOKEN`` (and
``HF_ENDPOINT`` for a private Hub). They are not exercised by this project's tests (no network
here); without a token they raise at once.

>>> map_columns({"question": "2+2?", "answer": "4", "source": "gsm"})
{'prompt': '2+2?', 'answer': '4', 'source': 'gsm'}
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError

__all__ = ["hf_publish", "hf_publish_run", "hf_status", "import_hf", "map_columns"]

_PROMPT = ("prompt", "question", "instruction", "input", "query", "problem")
_REPLY = ("final_text", "completion", "response", "output")
_ANSWER = ("answer", "solution", "gold", "target")
_REWARD = ("reward", "score")


def _first(row: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    for name in names:
        if name in row and row[name] is not None:
            return name, row[name]
    return None, None


def map_columns(record: Mapping[str, Any]) -> dict[str, Any]:
    """One dataset record as a row: ``prompt``, ``final_text``, ``answer``, ``reward``,
    ``messages`` read from their usual column names; every other column kept as it is."""
    row: dict[str, Any] = {}
    used: set[str] = set()
    messages = record.get("messages")
    if isinstance(messages, list) and messages and all(isinstance(m, Mapping) for m in messages):
        row["messages"] = [dict(m) for m in messages]
        used.add("messages")
        users = [m.get("content") for m in messages if m.get("role") == "user"]
        said = [m.get("content") for m in messages if m.get("role") == "assistant"]
        if users:
            row["prompt"] = str(users[0])
        if said:
            row["final_text"] = str(said[-1])
    for field, names in (("prompt", _PROMPT), ("final_text", _REPLY), ("answer", _ANSWER)):
        name, value = _first(record, names)
        if name is not None and field not in row:
            row[field] = value if field == "answer" else str(value)
            used.add(name)
    name, value = _first(record, _REWARD)
    if name is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        row["reward"] = float(value)
        used.add(name)
    row.update({k: v for k, v in record.items() if k not in used and k not in row})
    return row


def import_hf(repo: str, split: str = "train", revision: str | None = None,
              config: str | None = None, name: str | None = None, purpose: str = "train",
              mode: str | None = None, agent: str | None = None,
              description: str | None = None, max_rows: int = 100_000, wait: bool = True,
              timeout: float = 900.0, poll: float = 3.0,
              api_key: str | None = None) -> dict[str, Any]:
    """Bring one split of a Hugging Face dataset (or a local data folder/file) onto the platform.

    Returns:
        The new dataset's entry (``datasetId``, ``rows`` ...).

    Raises:
        ImportError: the ``datasets`` package is missing (``pip install 'whileai[hf]'``).
        ConfigError: the split holds no rows.
    """
    try:
        import datasets  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportError("import_hf needs the datasets package: pip install 'whileai[hf]'") \
            from exc
    from whileai.platform.datasets import push_rows

    path = Path(repo)
    if path.is_file():
        kind = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet",
                ".arrow": "arrow"}.get(path.suffix.lower())
        if kind is None:
            raise ConfigError(f"{repo}: unknown data file type; use .parquet, .jsonl, .csv "
                              "or .arrow")
        loaded = datasets.load_dataset(kind, data_files={split: str(path)}, split=split)
    else:
        loaded = datasets.load_dataset(repo, config, split=split, revision=revision)
    rows = [map_columns(r) for r in loaded.select(range(min(max_rows, len(loaded))))]
    if not rows:
        raise ConfigError(f"{repo} split {split!r} holds no rows")
    about = description or f"imported from {repo} ({split}{f', {revision}' if revision else ''})"
    entry: dict[str, Any] = push_rows(rows, name or f"{path.name or repo}-{split}",
                                      purpose=purpose, mode=mode, agent=agent,
                                      description=about, gate=False, api_key=api_key)
    return entry


def _hub(token: str | None) -> Any:
    token = token or os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if not token:
        raise ConfigError("no Hugging Face token: set HF_TOKEN (HF_ENDPOINT for a private Hub) "
                          "or pass token=")
    try:
        from huggingface_hub import HfApi
    except ImportError as exc:
        raise ImportError("the hf_* calls need huggingface_hub: pip install 'whileai[hf]'") \
            from exc
    return HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=token)


def hf_status(token: str | None = None) -> dict[str, Any]:
    """Which Hub account the token is, and the namespaces it can publish under (untested here)."""
    who = _hub(token).whoami()
    orgs = [o.get("name") for o in who.get("orgs") or [] if o.get("name")]
    return {"connected": True, "username": who.get("name"), "namespaces": [who.get("name"),
            *orgs], "scopes": (who.get("auth") or {}).get("accessToken", {}).get("role")}


def hf_publish(dataset_id: str, repo: str, *, private: bool = True, token: str | None = None,
               api_key: str | None = None) -> dict[str, Any]:
    """Push one of your platform datasets to a Hub dataset repo you own (untested here)."""
    api = _hub(token)
    from whileai.platform.datasets import pull
    from whileai.simulations.export.hf import to_hf_folder

    rows = pull(dataset_id, api_key=api_key)
    with tempfile.TemporaryDirectory() as folder:
        report = to_hf_folder(rows, folder, name=repo.split("/")[-1])
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=folder, repo_id=repo, repo_type="dataset")
    return {"repo": repo, "rows": report["rows"], "commit": str(commit)}


def hf_publish_run(run: Any, repo: str, adapter_dir: str | os.PathLike[str], *,
                   private: bool = True, dataset_repo: str | None = None,
                   token: str | None = None) -> dict[str, Any]:
    """Push a finished run's LoRA adapter folder with a model card to a Hub model repo
    (untested here)."""
    from whileai.simulations.training.runs import get_run

    api = _hub(token)
    info = run if isinstance(run, Mapping) else get_run(run)
    folder = Path(adapter_dir)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no adapter folder")
    summary = info.get("summary") or {}
    card = "\n".join([
        "---", f"base_model: {info.get('base_model') or 'unknown'}", "library_name: peft",
        *([f"datasets: [{dataset_repo}]"] if dataset_repo else []), "---",
        f"# {repo.split('/')[-1]}", "",
        f"Trained in run `{info.get('id')}` ({info.get('name')}), status {info.get('status')}.",
        *(f"- {k}: {v}" for k, v in sorted(summary.items()) if isinstance(v, (int, float, str))),
    ])
    api.create_repo(repo, repo_type="model", private=private, exist_ok=True)
    with tempfile.TemporaryDirectory() as staging:
        readme = Path(staging) / "README.md"
        readme.write_text(card + "\n", encoding="utf-8")
        api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="model")
        commit = api.upload_file(path_or_fileobj=str(readme), path_in_repo="README.md",
                                 repo_id=repo, repo_type="model")
    return {"repo": repo, "commit": str(commit)}
