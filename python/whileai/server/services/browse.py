"""Paginated reads for the pages: datasets by purpose with lineage, and counts for headers.

The API's list routes return whole lists; a page shows ``limit`` items from ``offset`` so it
stays fast with tens of thousands of datasets.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, Store
from whileai.server.services.datasets import entry
from whileai.server.store.tables import datasets

__all__ = ["dataset_page", "lineage"]


def dataset_page(store: Store, account: Account, *, limit: int,
                 offset: int) -> dict[str, Any]:
    """A page of datasets (newest first) with their cached profile, and counts by purpose."""
    where = datasets.c.account_id == account.id
    with store.engine.connect() as conn:
        counts: dict[str, int] = {purpose: int(n) for purpose, n in conn.execute(
            sa.select(datasets.c.purpose, sa.func.count()).where(where)
            .group_by(datasets.c.purpose))}
        rows = conn.execute(sa.select(datasets).where(where).order_by(datasets.c.seq.desc())
                            .limit(limit).offset(offset)).all()
    items = []
    for row in rows:
        item = entry(row)
        item["profile"] = json.loads(row.profile) if row.profile else None
        items.append(item)
    return {"datasets": items, "total": sum(counts.values()),
            "by_purpose": dict(sorted(counts.items()))}


def lineage(store: Store, account: Account, dataset_id: str) -> dict[str, Any]:
    """The chain of parents above a dataset and its direct children."""
    chain: list[dict[str, Any]] = []
    with store.engine.connect() as conn:
        current: str | None = dataset_id
        seen: set[str] = set()
        while current is not None and current not in seen and len(chain) < 50:
            seen.add(current)
            row = conn.execute(sa.select(datasets).where(
                datasets.c.id == current, datasets.c.account_id == account.id)).first()
            if row is None:
                break
            chain.append(entry(row))
            current = row.parent_id
        children = conn.execute(sa.select(datasets).where(
            datasets.c.parent_id == dataset_id, datasets.c.account_id == account.id)
            .order_by(datasets.c.seq)).all()
    return {"parents": chain[1:], "children": [entry(c) for c in children]}
