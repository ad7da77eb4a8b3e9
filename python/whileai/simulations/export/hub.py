"""The Hub out: ``hf_publish`` (a platform dataset to a dataset repo), ``hf_publish_run`` (a run's
adapter with a model card to a model repo), ``hf_status`` (who the token is).

They need a live Hub account: ``huggingface_hub`` with ``HF_TOKEN`` (and ``HF_ENDPOINT`` for a
private Hub). They are not exercised by this project's tests (no network here); without a token
they raise at once.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError

__all__ = ["hf_publish", "hf_publish_run", "hf_status"]


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
               api_key: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Push one of your platform datasets to a Hub dataset repo you own (untested here).

    ``progress=False`` silences the pull's and the export's progress lines on stderr.
    """
    api = _hub(token)
    from whileai.platform.datasets import pull
    from whileai.simulations.export.hf import to_hf_folder

    rows = pull(dataset_id, api_key=api_key, progress=progress)
    with tempfile.TemporaryDirectory() as folder:
        report = to_hf_folder(rows, folder, name=repo.split("/")[-1], progress=progress)
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
