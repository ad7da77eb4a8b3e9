"""Dataset records: list, change, delete, preview, profile, publish and the public catalog.

Every call that takes a dataset accepts its ``ds_...`` id or its name; a name is looked up on
the account and the newest set of that name wins (``platform/refs.py``). An unknown id or name
raises ``NotFoundError`` naming it. Moving the bytes (push, pull) is ``datasets.py``.
"""

from __future__ import annotations

from typing import Any

from whileai.platform.http import Connection, call, connect, json_of
from whileai.platform.refs import dataset_path

__all__ = [
    "catalog", "datasets", "delete_dataset", "delete_empty_datasets", "preview", "profile",
    "publish", "unpublish", "update_dataset",
]


def _json(method: str, route: str, api_key: str | None, base_url: str | None = None,
          **kwargs: Any) -> Any:
    return json_of(call(connect(api_key, base_url=base_url), method, route, **kwargs))


def _on_dataset(method: str, ref: str, tail: str, api_key: str | None,
                base_url: str | None, **kwargs: Any) -> dict[str, Any]:
    """One call on a dataset named by id or name (the name is looked up first)."""
    conn = connect(api_key, base_url=base_url)
    out: dict[str, Any] = json_of(call(conn, method, dataset_path(conn, ref, tail), **kwargs))
    return out


def datasets(api_key: str | None = None, *, base_url: str | None = None) -> dict[str, Any]:
    """Your datasets, newest first, plus the storage used (``datasets``, ``storageBytes``).

    >>> datasets()["count"]  # doctest: +SKIP
    3
    """
    out: dict[str, Any] = _json("GET", "/v1/datasets", api_key, base_url)
    return out


def update_dataset(dataset_id: str, purpose: str | None = None, mode: str | None = None,
                   agent: str | None = None, description: str | None = None,
                   api_key: str | None = None, *, base_url: str | None = None) -> dict[str, Any]:
    """Change what a dataset is for, its mode, agent or description (only what you pass)."""
    body = {"purpose": purpose, "mode": mode, "agent": agent, "description": description}
    return _on_dataset("PATCH", dataset_id, "", api_key, base_url, json=body)


def delete_dataset(dataset_id: str, api_key: str | None = None, *,
                   base_url: str | None = None) -> dict[str, Any]:
    """Delete a dataset and its bytes for good."""
    return _on_dataset("DELETE", dataset_id, "", api_key, base_url)


def delete_empty_datasets(max_rows: int = 0, dry_run: bool = False, api_key: str | None = None,
                          *, base_url: str | None = None) -> dict[str, Any]:
    """Delete datasets with no bytes, or ``max_rows`` rows or fewer; returns the ids."""
    out: dict[str, Any] = _json("POST", "/v1/datasets/delete-empty", api_key, base_url,
                                params={"max_rows": max_rows, "dry_run": dry_run})
    return out


def preview(dataset_id: str, api_key: str | None = None, *,
            base_url: str | None = None) -> dict[str, Any]:
    """Three sample rows and the row-contract report of one of your datasets."""
    return _on_dataset("GET", dataset_id, "/preview", api_key, base_url)


def profile(dataset_id: str, force: bool = False, api_key: str | None = None, *,
            base_url: str | None = None) -> dict[str, Any]:
    """Pass rate, gradient support, mixed tasks, tool use, tokens, per-task pass rates.

    Cached on the server until the set changes (``cached`` says which); ``force`` recomputes.
    """
    return _on_dataset("GET", dataset_id, "/profile", api_key, base_url,
                       params={"force": force})


def publish(dataset_id: str, agent: str, description: str | None = None,
            api_key: str | None = None, *, base_url: str | None = None) -> dict[str, Any]:
    """Show a dataset in the public catalog under ``agent``; return the card."""
    return _on_dataset("POST", dataset_id, "/publish", api_key, base_url,
                       json={"agent": agent, "description": description})


def unpublish(dataset_id: str, api_key: str | None = None, *,
              base_url: str | None = None) -> dict[str, Any]:
    """Take a dataset off the public catalog (the data stays)."""
    return _on_dataset("POST", dataset_id, "/unpublish", api_key, base_url)


def catalog(*, base_url: str | None = None) -> dict[str, Any]:
    """The public catalog: ``{"datasets": [card, ...], "agents": [...]}``; no key needed."""
    conn = connect(None, base_url=base_url, need_key=False)
    out: dict[str, Any] = json_of(call(Connection(base_url=conn.base_url, api_key=None), "GET",
                                       "/v1/catalog"))
    return out
