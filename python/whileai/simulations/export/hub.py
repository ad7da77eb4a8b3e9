"""The Hub out: ``hf_publish`` (a platform dataset to a dataset repo), ``hf_publish_run`` (a run's
adapter with a model card to a model repo), ``hf_status`` (who the token is).

They need a live Hub account: ``huggingface_hub`` with ``HF_TOKEN`` (and ``HF_ENDPOINT`` for a
private Hub). They are not exercised by this project's tests (no network here); without a token
they raise at once.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError
from whileai.simulations.export.hf import to_hf_folder
from whileai.simulations.training.runs import get_run

__all__ = ["adapter_folder", "hf_publish", "hf_publish_run", "hf_status", "repo_id"]


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


def _slug(text: str) -> str:
    """A Hub repo name from a dataset or run name.

    >>> _slug("Airline refunds v3!")
    'airline-refunds-v3'
    """
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return slug[:96] or "whileai"


def repo_id(namespace: str | None, repo: str | None, *, name: str, username: str | None) -> str:
    """The ``namespace/repo`` a push goes to: the given parts, else the user and a slug of
    ``name``. ``namespace="user/repo"`` alone (the older call form) is taken as the whole id.

    >>> repo_id(None, None, name="Airline v3", username="ana")
    'ana/airline-v3'
    >>> repo_id("acme", "refunds", name="x", username="ana"), repo_id("ana/r", None, name="x",
    ...                                                                username=None)
    ('acme/refunds', 'ana/r')
    """
    if repo and "/" in repo:
        return repo
    if namespace and "/" in namespace and repo is None:
        return namespace
    owner = namespace or username
    if not owner:
        raise ConfigError("no Hub namespace: pass namespace= (a user or an org) or repo='ns/name'")
    return f"{owner}/{repo or _slug(name)}"


def _check_wait(timeout: float, poll: float) -> None:
    for label, value in (("timeout", timeout), ("poll", poll)):
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"{label} must be a number of seconds > 0, got {value!r}")


def hf_status(api_key: str | None = None, *, token: str | None = None) -> dict[str, Any]:
    """Which Hub account the token is, and the namespaces it can publish under (untested here).

    The Hub token is ``token=`` or ``HF_TOKEN``; ``api_key`` (the platform key of the spec's
    form) is accepted and not needed: this package talks to the Hub directly.
    """
    who = _hub(token).whoami()
    orgs = [o.get("name") for o in who.get("orgs") or [] if o.get("name")]
    return {"connected": True, "username": who.get("name"), "namespaces": [who.get("name"),
            *orgs], "scopes": (who.get("auth") or {}).get("accessToken", {}).get("role")}


def hf_publish(dataset_id: str, namespace: str | None = None, repo: str | None = None,
               private: bool = False, wait: bool = True, timeout: float = 600.0,
               poll: float = 2.5, api_key: str | None = None, *, token: str | None = None,
               progress: bool = True) -> dict[str, Any]:
    """Push one of your platform datasets to a Hub dataset repo you own (untested here).

    The repo defaults to your Hub user and a slug of the dataset's name; the split is the set's
    purpose (``train``, ``holdout``, ``eval``), and the commit is tagged ``zp-<dataset id>``.
    The push runs in this process and returns once the commit is made, so ``wait``, ``timeout``
    and ``poll`` (the spec's hosted form) are checked and change nothing. ``progress=False``
    silences the pull's and the export's progress lines on stderr.

    Returns:
        ``{"repo", "url", "commit", "tag", "split", "rows"}``.
    """
    _check_wait(timeout, poll)
    from whileai.platform.http import call, connect, json_of
    from whileai.platform.refs import dataset_path

    conn = connect(api_key)
    entry: dict[str, Any] = json_of(call(conn, "GET", dataset_path(conn, dataset_id)))
    api = _hub(token)
    target = repo_id(namespace, repo, name=str(entry.get("name") or dataset_id),
                     username=None if namespace or (repo and "/" in repo) else
                     api.whoami().get("name"))
    from whileai.platform.datasets import pull

    split = str(entry.get("purpose") or "train")
    rows = pull(entry["datasetId"], api_key=api_key, progress=progress)
    with tempfile.TemporaryDirectory() as folder:
        report = to_hf_folder(rows, folder, split=split, name=target.split("/")[-1],
                              progress=progress)
        api.create_repo(target, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=folder, repo_id=target, repo_type="dataset")
    tag = f"zp-{entry['datasetId']}"
    api.create_tag(target, tag=tag, repo_type="dataset", exist_ok=True)
    return {"repo": target, "url": getattr(commit, "repo_url", None) or target,
            "commit": getattr(commit, "oid", None) or str(commit), "tag": tag, "split": split,
            "rows": report["rows"]}


def adapter_folder(info: Mapping[str, Any], adapter_dir: str | os.PathLike[str] | None) -> Path:
    """The adapter folder to push: ``adapter_dir``, else the local folder the run recorded
    with ``finish(adapter=...)``.

    Raises:
        ConfigError: neither names a folder on this machine (the message says which).
    """
    chosen = adapter_dir if adapter_dir is not None else info.get("adapter")
    if not chosen:
        raise ConfigError(f"run {info.get('id')}: no adapter recorded (finish(adapter=...)); "
                          "pass adapter_dir= (the LoRA adapter folder)")
    folder = Path(str(chosen))
    if not folder.is_dir():
        raise ConfigError(f"run {info.get('id')}: adapter {str(chosen)!r} is not a folder on this "
                          "machine; pass adapter_dir= (the LoRA adapter folder)")
    return folder


def hf_publish_run(run_id: Any, namespace: str | None = None, repo: str | None = None,
                   private: bool = True, wait: bool = True, timeout: float = 900.0,
                   poll: float = 3.0, api_key: str | None = None, *,
                   adapter_dir: str | os.PathLike[str] | None = None,
                   dataset_repo: str | None = None, token: str | None = None) -> dict[str, Any]:
    """Push a finished run's LoRA adapter folder with a model card to a Hub model repo
    (untested here).

    The adapter is ``adapter_dir``, else the folder the run recorded with
    ``finish(adapter=...)``; the repo defaults to your Hub user and a slug of the run's name;
    the commit is tagged ``zp-<run id>``. Private by default. ``wait``, ``timeout`` and
    ``poll`` are checked and change nothing (the push runs in this process); ``api_key`` is
    accepted for the spec's form (the run is read from its folder, else the configured
    platform).
    """
    _check_wait(timeout, poll)
    info = run_id if isinstance(run_id, Mapping) else get_run(run_id)
    folder = adapter_folder(info, adapter_dir)
    api = _hub(token)
    target = repo_id(namespace, repo, name=str(info.get("name") or info.get("id")),
                     username=None if namespace or (repo and "/" in repo) else
                     api.whoami().get("name"))
    summary = info.get("summary") or {}
    card = "\n".join([
        "---", f"base_model: {info.get('base_model') or 'unknown'}", "library_name: peft",
        *([f"datasets: [{dataset_repo}]"] if dataset_repo else []), "---",
        f"# {target.split('/')[-1]}", "",
        f"Trained in run `{info.get('id')}` ({info.get('name')}), status {info.get('status')}.",
        *(f"- {k}: {v}" for k, v in sorted(summary.items()) if isinstance(v, (int, float, str))),
    ])
    api.create_repo(target, repo_type="model", private=private, exist_ok=True)
    with tempfile.TemporaryDirectory() as staging:
        readme = Path(staging) / "README.md"
        readme.write_text(card + "\n", encoding="utf-8")
        api.upload_folder(folder_path=str(folder), repo_id=target, repo_type="model")
        commit = api.upload_file(path_or_fileobj=str(readme), path_in_repo="README.md",
                                 repo_id=target, repo_type="model")
    tag = f"zp-{info.get('id')}"
    api.create_tag(target, tag=tag, repo_type="model", exist_ok=True)
    return {"repo": target, "commit": str(commit), "tag": tag}
