"""Datasets: create from an upload, list, change, delete, publish, and read their manifests.

Every function takes the authenticated ``Account`` and filters on it; another account's
dataset is reported as not found (its existence is not revealed). Public datasets can be read
by anyone through ``manifest(..., account=None)``.
"""

from __future__ import annotations

import secrets
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from whileai.server.services import Account, Store
from whileai.server.services.accounts import usage_bytes
from whileai.server.services.privileged import lines_in_files, part_holds, refusal
from whileai.server.services.problems import Conflict, Invalid, NotFound, QuotaExceeded
from whileai.server.store.blobs import PartWriter, remove_parts
from whileai.server.store.tables import accounts, agents, datasets, parts

__all__ = [
    "PURPOSES", "NewDataset", "catalog", "create", "delete", "delete_empty", "entry", "get",
    "list_datasets", "manifest", "part_file", "publish", "unpublish", "update",
]

PURPOSES = ("train", "holdout", "eval", "raw")


@dataclass(frozen=True, slots=True, kw_only=True)
class NewDataset:
    """What a push says about the set it uploads."""

    name: str
    purpose: str = "train"
    mode: str | None = None
    agent: str | None = None
    description: str | None = None
    parent: str | None = None
    linked: str | None = None


def entry(row: Any, part_count: int | None = None) -> dict[str, Any]:
    """The registry entry of one dataset row, as the API returns it."""
    out = {
        "datasetId": row.id, "name": row.name, "purpose": row.purpose, "mode": row.mode,
        "agent": row.agent, "description": row.description, "parentId": row.parent_id,
        "linkedId": row.linked_id, "rows": int(row.rows), "bytes": int(row.bytes),
        "public": bool(row.public), "status": "finalized", "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    }
    if part_count is not None:
        out["parts"] = part_count
    return out


def _owned(conn: sa.Connection, account: Account, dataset_id: str) -> Any:
    row = conn.execute(sa.select(datasets).where(
        datasets.c.id == dataset_id, datasets.c.account_id == account.id)).first()
    if row is None:
        raise NotFound(f"no dataset {dataset_id} on this account")
    return row


def _check_purpose(purpose: str) -> None:
    if purpose not in PURPOSES:
        raise Invalid(f"purpose must be one of {', '.join(PURPOSES)}, "
                      f"got {purpose!r}")


def _touch_agent(conn: sa.Connection, account: Account, name: str, now: float) -> None:
    exists = conn.execute(sa.select(agents.c.id).where(
        agents.c.account_id == account.id, agents.c.name == name)).first()
    if exists is None:
        conn.execute(sa.insert(agents).values(
            id="agt_" + secrets.token_hex(8), account_id=account.id, name=name,
            created_at=now, updated_at=now))


def check_new(store: Store, account: Account, new: NewDataset) -> int:
    """Refuse a push before any byte moves; return the storage bytes still free."""
    _check_purpose(new.purpose)
    if not new.name.strip():
        raise Invalid("a dataset needs a name")
    with store.engine.connect() as conn:
        for ref in (new.parent, new.linked):
            if ref is not None:
                _owned(conn, account, ref)
        return store.config.max_storage_bytes - usage_bytes(conn, account.id)


def create(store: Store, account: Account, new: NewDataset, writer: PartWriter,
           rows: int) -> dict[str, Any]:
    """Make the uploaded part a dataset in one transaction (or leave nothing behind)."""
    dataset_id = "ds_" + secrets.token_hex(12)
    relative = writer.finish(store.config.parts_dir, dataset_id)
    now = time.time()
    try:
        with store.engine.begin() as conn:
            # Lock the account row: concurrent pushes of one account check the quota in turn.
            conn.execute(sa.select(accounts.c.id).where(accounts.c.id == account.id)
                         .with_for_update())
            used = usage_bytes(conn, account.id)
            if used + writer.bytes > store.config.max_storage_bytes:
                raise QuotaExceeded(f"storage quota: {used + writer.bytes} bytes "
                                    f"would exceed {store.config.max_storage_bytes}; delete "
                                    "datasets (whileai purge --empty) or ask for more")
            for ref in (new.parent, new.linked):
                if ref is not None:
                    _owned(conn, account, ref)
            conn.execute(sa.insert(datasets).values(
                id=dataset_id, account_id=account.id, name=new.name, purpose=new.purpose,
                mode=new.mode, agent=new.agent, description=new.description,
                parent_id=new.parent, linked_id=new.linked, rows=rows, bytes=writer.bytes,
                version=1, public=False, created_at=now, updated_at=now))
            conn.execute(sa.insert(parts).values(
                dataset_id=dataset_id, idx=0, path=relative, rows=rows, bytes=writer.bytes,
                sha256=writer.sha256))
            if new.linked is not None:
                conn.execute(sa.update(datasets).where(datasets.c.id == new.linked)
                             .values(linked_id=dataset_id, updated_at=now))
            if new.agent:
                _touch_agent(conn, account, new.agent, now)
            row = conn.execute(sa.select(datasets).where(datasets.c.id == dataset_id)).one()
    except BaseException:
        remove_parts(store.config.parts_dir, [relative])
        raise
    return entry(row, 1)


def get(store: Store, account: Account, dataset_id: str) -> dict[str, Any]:
    """One dataset's entry."""
    with store.engine.connect() as conn:
        row = _owned(conn, account, dataset_id)
        count = conn.execute(sa.select(sa.func.count()).select_from(parts)
                             .where(parts.c.dataset_id == dataset_id)).scalar()
    return entry(row, int(count or 0))


def list_datasets(store: Store, account: Account, *, name: str | None = None) -> dict[str, Any]:
    """Every dataset of the account (only those called ``name`` when given), newest first,
    plus the storage the whole account uses."""
    rule = datasets.c.account_id == account.id
    if name is not None:
        rule = sa.and_(rule, datasets.c.name == name)
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(datasets).where(rule)
                            .order_by(datasets.c.seq.desc())).all()
        used = usage_bytes(conn, account.id)
    items = [entry(r) for r in rows]
    return {"datasets": items, "count": len(items), "storageBytes": used,
            "storageLimitBytes": store.config.max_storage_bytes}


def update(store: Store, account: Account, dataset_id: str,
           changes: dict[str, Any]) -> dict[str, Any]:
    """Change purpose, mode, agent or description; fields not given stay."""
    allowed = {"purpose", "mode", "agent", "description"}
    values = {k: v for k, v in changes.items() if k in allowed and v is not None}
    if "purpose" in values:
        _check_purpose(values["purpose"])
    now = time.time()
    with store.engine.begin() as conn:
        _owned(conn, account, dataset_id)
        if values:
            conn.execute(sa.update(datasets).where(datasets.c.id == dataset_id)
                         .values(**values, updated_at=now))
        if values.get("agent"):
            _touch_agent(conn, account, values["agent"], now)
        row = conn.execute(sa.select(datasets).where(datasets.c.id == dataset_id)).one()
    return entry(row)


def _delete_rows(conn: sa.Connection, ids: list[str]) -> list[str]:
    """Delete datasets and their manifests; return the part paths to unlink after commit."""
    if not ids:
        return []
    paths = list(conn.execute(sa.select(parts.c.path).where(parts.c.dataset_id.in_(ids)))
                 .scalars())
    conn.execute(sa.delete(parts).where(parts.c.dataset_id.in_(ids)))
    conn.execute(sa.update(datasets).where(datasets.c.linked_id.in_(ids)).values(linked_id=None))
    conn.execute(sa.delete(datasets).where(datasets.c.id.in_(ids)))
    return paths


def delete(store: Store, account: Account, dataset_id: str) -> dict[str, Any]:
    """Delete one dataset and its bytes for good."""
    with store.engine.begin() as conn:
        row = _owned(conn, account, dataset_id)
        paths = _delete_rows(conn, [dataset_id])
    remove_parts(store.config.parts_dir, paths)
    return {"datasetId": dataset_id, "deleted": True, "rows": int(row.rows),
            "bytes": int(row.bytes)}


def delete_empty(store: Store, account: Account, *, max_rows: int,
                 dry_run: bool) -> dict[str, Any]:
    """Delete the account's datasets with no bytes (or ``max_rows`` rows or fewer)."""
    rule = datasets.c.bytes == 0
    if max_rows > 0:
        rule = sa.or_(rule, datasets.c.rows <= max_rows)
    with store.engine.begin() as conn:
        ids = list(conn.execute(sa.select(datasets.c.id).where(
            datasets.c.account_id == account.id, rule).order_by(datasets.c.seq)).scalars())
        paths = [] if dry_run else _delete_rows(conn, ids)
    remove_parts(store.config.parts_dir, paths)
    return {"deleted": ids, "count": len(ids), "dryRun": dry_run, "maxRows": max_rows}


def _readable(conn: sa.Connection, account: Account | None, dataset_id: str) -> Any:
    """A dataset the caller owns, or any public one."""
    row = conn.execute(sa.select(datasets).where(datasets.c.id == dataset_id)).first()
    if row is None or not (row.public or (account is not None and row.account_id == account.id)):
        hint = "" if account is not None else " (or it is not public: pass an API key)"
        raise NotFound(f"no dataset {dataset_id}{hint}")
    return row


def manifest(store: Store, account: Account | None, dataset_id: str) -> dict[str, Any]:
    """The dataset's parts in order: every one must be read to get the whole set."""
    with store.engine.connect() as conn:
        row = _readable(conn, account, dataset_id)
        listed = conn.execute(sa.select(parts).where(parts.c.dataset_id == dataset_id)
                              .order_by(parts.c.idx)).all()
    return {
        "datasetId": dataset_id, "name": row.name, "rows": int(row.rows),
        "bytes": int(row.bytes),
        "parts": [{"index": p.idx, "rows": int(p.rows), "bytes": int(p.bytes),
                   "sha256": p.sha256, "url": f"/v1/datasets/{dataset_id}/parts/{p.idx}"}
                  for p in listed],
    }


def part_file(store: Store, account: Account | None, dataset_id: str, index: int) -> Path:
    """The file of one part, after the same access check as ``manifest``.

    Read by anyone but its owner (a public set), a part holding a ``privileged`` block (a set
    published before the publish check existed) is refused rather than served.
    """
    with store.engine.connect() as conn:
        row = _readable(conn, account, dataset_id)
        path = conn.execute(sa.select(parts.c.path).where(
            parts.c.dataset_id == dataset_id, parts.c.idx == index)).scalar()
    if path is None:
        raise NotFound(f"dataset {dataset_id} has no part {index}")
    found = store.config.parts_dir / str(path)
    if (account is None or row.account_id != account.id) and part_holds(found):
        raise Conflict(f"public dataset {dataset_id} holds teacher-only `privileged` "
                       "blocks (published before publishing checked for them); its owner must "
                       "unpublish it and publish a set pushed without them")
    return found


def _card(row: Any, owner: str) -> dict[str, Any]:
    return {"datasetId": row.id, "name": row.name, "agent": row.card_agent,
            "description": row.card_description, "rows": int(row.rows),
            "bytes": int(row.bytes), "purpose": row.purpose, "mode": row.mode,
            "publishedAt": row.published_at, "owner": owner, "ownerId": row.account_id}


def _card_key(name: str, agent: str) -> tuple[str, str]:
    """What makes two cards look alike: name and agent, case, width and spacing aside.

    >>> _card_key("Orders  V1", "ＳＵＰＰＯＲＴ") == _card_key("orders v1", "support")
    True
    """
    def fold(text: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", text).casefold().split())

    return fold(name), fold(agent)


def _lookalike(conn: sa.Connection, account: Account, name: str, agent: str) -> None:
    """Refuse a card another account's public card could be taken for."""
    mine = _card_key(name, agent)
    others = conn.execute(
        sa.select(datasets.c.id, datasets.c.name, datasets.c.card_agent,
                  accounts.c.name.label("owner"))
        .join(accounts, accounts.c.id == datasets.c.account_id)
        .where(datasets.c.public.is_(True), datasets.c.account_id != account.id)).all()
    for other_id, other_name, other_agent, owner in others:
        if _card_key(other_name, other_agent or "") == mine:
            raise Conflict(f"account {owner} publishes {other_name!r} for agent "
                           f"{other_agent!r} already ({other_id}); a card of the same name and "
                           "agent from another account could be taken for it: rename the "
                           "dataset or publish under another agent")


def publish(store: Store, account: Account, dataset_id: str, *, agent: str,
            description: str | None) -> dict[str, Any]:
    """Show a dataset in the public catalog under ``agent``; return its card."""
    if not agent.strip():
        raise Invalid("publish needs an agent name (for example "
                      "'airline-support')")
    with store.engine.connect() as conn:
        _owned(conn, account, dataset_id)
        paths = list(conn.execute(sa.select(parts.c.path).where(parts.c.dataset_id == dataset_id)
                                  .order_by(parts.c.idx)).scalars())
    held = lines_in_files(store.config.parts_dir / str(p) for p in paths)
    if held:
        raise refusal(held, f"dataset {dataset_id}", publishing=True)
    now = time.time()
    with store.engine.begin() as conn:
        row = _owned(conn, account, dataset_id)
        if not row.rows:
            raise Conflict(f"dataset {dataset_id} holds no rows; push rows first")
        _lookalike(conn, account, row.name, agent)
        conn.execute(sa.update(datasets).where(datasets.c.id == dataset_id).values(
            public=True, card_agent=agent, card_description=description or row.description,
            published_at=now, updated_at=now))
        row = conn.execute(sa.select(datasets).where(datasets.c.id == dataset_id)).one()
    return _card(row, account.name)


def unpublish(store: Store, account: Account, dataset_id: str) -> dict[str, Any]:
    """Take a dataset off the catalog; the data stays."""
    with store.engine.begin() as conn:
        _owned(conn, account, dataset_id)
        conn.execute(sa.update(datasets).where(datasets.c.id == dataset_id).values(
            public=False, card_agent=None, card_description=None, published_at=None,
            updated_at=time.time()))
        row = conn.execute(sa.select(datasets).where(datasets.c.id == dataset_id)).one()
    return entry(row)


def catalog(store: Store) -> dict[str, Any]:
    """Every public card with its owner account, newest first, and the agents they are grouped
    under."""
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(datasets, accounts.c.name.label("owner"))
                            .join(accounts, accounts.c.id == datasets.c.account_id)
                            .where(datasets.c.public.is_(True))
                            .order_by(datasets.c.published_at.desc(), datasets.c.seq)).all()
    cards = [_card(r, r.owner) for r in rows]
    by_agent: dict[str, dict[str, Any]] = {}
    for card in cards:
        group = by_agent.setdefault(card["agent"], {"agent": card["agent"], "datasets": 0,
                                                    "rows": 0})
        group["datasets"] += 1
        group["rows"] += card["rows"]
    return {"datasets": cards, "agents": sorted(by_agent.values(), key=lambda g: g["agent"])}
