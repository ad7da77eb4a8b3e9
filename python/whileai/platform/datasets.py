"""Dataset transfers: push rows or a file, pull a set back (``manage.py`` has the calls
that list, change, delete, preview, profile and publish a set).

Rows travel as row-schema v1 JSONL. A push streams its body (never the whole set in memory)
and the server makes the dataset visible only once every byte is stored. ``pull`` reads every
part the manifest lists and checks each part's SHA-256.

Every call that takes a dataset (``pull``, ``parent=``, and the calls of ``manage.py``)
accepts its ``ds_...`` id or its name; a name is looked up on the account and the newest set of
that name wins (``platform/refs.py``). An unknown id or name raises ``NotFoundError`` naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai._gc import paused_gc
from whileai.platform.errors import PlatformError
from whileai.platform.http import Connection, call, connect, json_of
from whileai.platform.refs import dataset_path, resolve_dataset
from whileai.rows.jsonl import check_block, parse_chunks, split_complete

if TYPE_CHECKING:  # imported where used: whileai.simulations imports this package first
    from whileai.rows.progress import Progress
__all__ = ["pull", "push_file", "push_rows"]

CHUNK = 4 << 20  # upload chunks: fewer, larger sends on a fast link
READ_CHUNK = 1 << 20  # download reads (urllib3 gathers a large read from many small ones)


def _encode(rows: Sequence[dict[str, Any]], meter: Progress | None = None, *,
            keep_privileged: bool = False) -> Callable[[], Iterator[bytes]]:
    """A body factory: the rows as JSONL, in ~1 MB chunks (a RowError names the bad row).

    Every line passes the exit filter (``rows.outbound``): a line that may hold a
    ``privileged`` block (dropped unless ``keep_privileged``), a ``vector`` or a secret is
    encoded again from the filtered row. ``meter`` counts the rows and bytes handed to the
    connection (from 0 again on a retry).
    """

    from whileai.rows.jsonl_write import dumps_row
    from whileai.rows.outbound import outbound, outbound_check

    encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode

    def chunks() -> Iterator[bytes]:
        clean = outbound_check()
        buffer: list[str] = []
        size = sent = 0
        for index, row in enumerate(rows):
            try:  # one reused encoder (fast); dumps_row handles odd values and names bad ones
                line = encode(row) if type(row) is dict else dumps_row(row, where=f"rows[{index}]")
            except (TypeError, ValueError, RecursionError):
                line = dumps_row(row, where=f"rows[{index}]")
            if not clean(line):
                line = dumps_row(outbound(row, keep_privileged=keep_privileged),
                                 where=f"rows[{index}]")
            buffer.append(line)
            size += len(line) + 1
            if size >= CHUNK:
                block = ("\n".join(buffer) + "\n").encode("utf-8")
                yield block
                sent += len(block)
                if meter is not None:
                    meter.update(index + 1, bytes=sent)
                buffer, size = [], 0
        if buffer:
            block = ("\n".join(buffer) + "\n").encode("utf-8")
            yield block
            if meter is not None:
                meter.update(len(rows), bytes=sent + len(block))

    return chunks


def _send(conn: Connection, body: Callable[[], Any], *, name: str, purpose: str | None,
          mode: str | None, agent: str | None, description: str | None, parent: str | None,
          linked: str | None = None, keep_privileged: bool = False) -> dict[str, Any]:
    if parent is not None:
        parent = resolve_dataset(conn, parent)
    if linked is not None:
        linked = resolve_dataset(conn, linked)
    params: dict[str, Any] = {"name": name, "purpose": purpose or "train", "mode": mode,
                              "agent": agent, "description": description, "parent": parent,
                              "linked": linked}
    if keep_privileged:  # the server refuses privileged blocks unless the push says so
        params["keep_privileged"] = "true"
    headers = {"Content-Type": "application/x-ndjson"}
    response = call(conn, "POST", "/v1/datasets", params=params, body=body, headers=headers,
                    timeout=3600.0)
    entry: dict[str, Any] = json_of(response)
    return entry


def _holdout_power(entry: dict[str, Any], rows: Sequence[dict[str, Any]],
                   prove_effect: float) -> None:
    from whileai.rows.source import task_key
    from whileai.simulations.measure.power import detectable_effect
    tasks = len({task_key(r) for r in rows}) or 1
    effect = detectable_effect(tasks)
    if effect > prove_effect:
        message = (f"holdout {entry['datasetId']}: {tasks} tasks can only prove a gain of "
                   f"{effect:.3f} or more at 80% power, not {prove_effect}; hold out more tasks")
        entry.setdefault("warnings", []).append(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def push_rows(
    rows: list[dict[str, Any]], name: str, api_key: str | None = None, parent: str | None = None,
    gate: bool = False, mode: str | None = None, purpose: str | None = None,
    agent: str | None = None, description: str | None = None, endorsed: Sequence[str] = (),
    strict_hacks: bool = False, prove_effect: float = 0.05, *, linked: str | None = None,
    base_url: str | None = None, progress: bool = True, keep_privileged: bool = False,
) -> dict[str, Any]:
    """Upload rows as JSONL into a new dataset; return its registry entry (``datasetId``...).

    Args:
        rows: row dicts (schema v1). name: the dataset's name. parent: the ``ds_`` id this set
            iterates on (lineage). gate: run ``publish_gate`` first (its report comes back as
            ``entry["gate"]``). mode: the simulation mode that made it. purpose: ``train``
            (default), ``holdout``, ``eval`` or ``raw``. endorsed / strict_hacks: passed to the
            gate's hack scan. prove_effect: a holdout push warns when it is too small to prove
            this gain. linked: the ``ds_`` id of its train/holdout twin. progress: rows and
            bytes sent, with the rate, on stderr (and a summary); False silences it.
            keep_privileged: keep the teacher-only ``privileged`` block (a private store;
            the server then refuses to publish the set). Without it every row's block is
            dropped on the way out (``rows.outbound``), and secrets are masked either way.

    Raises:
        PublishGateError: the gate refused the rows (nothing was sent).
        RowError: a row cannot be written as JSON (nothing was stored).
        NoKeyError, KeyRefusedError, PlatformQuotaError, UnreachableError: see the message.

    >>> push_rows([{"prompt": "hi"}], "smoke")["rows"]  # doctest: +SKIP
    1
    """
    conn = connect(api_key, base_url=base_url)
    rows = list(rows)
    report = None
    if gate:
        # local: whileai.simulations imports this package first (a debt in test_house_layers)
        from whileai.simulations.selection.gate import publish_gate
        report = publish_gate(rows, mode=mode if mode in ("rl", "sft") else "auto",
                              endorsed=list(endorsed) or None, strict_hacks=strict_hacks,
                              progress=progress)
    from whileai.rows.progress import Progress
    with Progress("push", len(rows), enabled=progress) as line:
        entry = _send(conn, _encode(rows, line, keep_privileged=keep_privileged), name=name,
                      purpose=purpose, mode=mode, agent=agent, description=description,
                      parent=parent, linked=linked, keep_privileged=keep_privileged)
    if report is not None:
        entry["gate"] = report
    if purpose == "holdout":
        _holdout_power(entry, rows, prove_effect)
    return entry


class _FileBody:
    """A JSONL file as an upload body: its length, then ~4 MB chunks of its bytes as they are.

    Every line is parsed as it is read (one decode per chunk, ``json.loads`` per line), so a
    bad line raises ``RowError`` (file:line) in the middle of the upload; the server then
    drops the partial part and stores nothing.
    """

    def __init__(self, path: Path, line: Progress | None = None) -> None:
        self.path = path
        self.size = path.stat().st_size
        self.line = line

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[bytes]:
        checked = 0
        carry = b""
        where = str(self.path)
        with open(self.path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                block, carry = split_complete(carry, chunk)
                if block or chunk.rfind(b"\n") >= 0:
                    check_block(block, where, checked)
                    checked += block.count(b"\n") + 1
                yield chunk
                if self.line is not None:
                    self.line.update(handle.tell(), rows=checked)
        if carry.strip():
            check_block(carry, where, checked)


_OVERLAP = 4096  # bytes each chunk's check re-reads of the one before (a word cut in two)


def _file_clean(path: Path) -> bool:
    """True when the file's bytes certainly hold nothing the exit filter would change."""
    from whileai.rows.outbound import outbound_check
    clean = outbound_check()
    tail = b""
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            window = tail + chunk
            if not clean(window.decode("utf-8", "replace")):
                return False
            tail = window[-_OVERLAP:]
    return True


def push_file(
    path: str | os.PathLike[str], name: str | None = None, api_key: str | None = None,
    parent: str | None = None, gate: bool = True, mode: str | None = None, *,
    agent: str | None = None, purpose: str | None = None, description: str | None = None,
    base_url: str | None = None, progress: bool = True, keep_privileged: bool = False,
) -> dict[str, Any]:
    """Upload a JSONL file; ``gate=True`` stamps and checks rows first (``entry["gate"]``).

    With ``gate=False`` the bytes go up exactly as they are on disk (after every line is
    checked to be one JSON object), unless the file may hold something the exit filter
    removes (a ``privileged`` block, a ``vector``, a key of the environment): then its rows are
    filtered and encoded again, as ``push_rows`` sends them. ``keep_privileged`` as in
    ``push_rows``. ``mode="sft"`` gates an SFT export as SFT rows (an export has no repeats,
    so the RL gate would refuse it); ``agent``, ``purpose`` and ``description`` are recorded
    as ``push_rows`` records them. ``progress`` shows bytes and rows sent, with the rate, on
    stderr (and a summary); False silences it.

    Raises:
        RowError: a line is not a JSON object (``file:line``); nothing was sent.
        PublishGateError: the gate refused the rows; nothing was sent.

    >>> push_file("rows.jsonl")["datasetId"]  # doctest: +SKIP
    'ds_...'
    """
    from whileai.rows.jsonl import read_jsonl
    source = Path(path)
    title = name or source.name
    if gate:
        rows = list(read_jsonl(source))
        return push_rows(rows, title, api_key=api_key, parent=parent, gate=True, mode=mode,
                         purpose=purpose, agent=agent, description=description,
                         base_url=base_url, progress=progress, keep_privileged=keep_privileged)
    from whileai.rows.progress import Progress
    conn = connect(api_key, base_url=base_url)
    meta: dict[str, Any] = {"name": title, "purpose": purpose, "mode": mode, "agent": agent,
                            "description": description, "parent": parent,
                            "keep_privileged": keep_privileged}
    if source.suffix == ".gz" or not _file_clean(source):
        rows = list(read_jsonl(source))
        with Progress("push", len(rows), enabled=progress) as line:
            return _send(conn, _encode(rows, line, keep_privileged=keep_privileged), **meta)
    with Progress("push", source.stat().st_size, enabled=progress, unit="bytes") as line:
        return _send(conn, lambda: _FileBody(source, line), **meta)


def _manifest(dataset_id: str, api_key: str | None,
              base_url: str | None) -> tuple[Connection, dict[str, Any]]:
    conn = connect(api_key, base_url=base_url, need_key=False)
    manifest: dict[str, Any] = json_of(call(conn, "GET",
                                            dataset_path(conn, dataset_id, "/manifest")))
    return conn, manifest


def _part_chunks(conn: Connection, part: dict[str, Any], line: Progress) -> Iterator[bytes]:
    """The bytes of one part, streamed, checked against the manifest's size and SHA-256."""
    response = call(conn, "GET", part["url"], stream=True, timeout=3600.0)
    digest = hashlib.sha256()
    size = 0
    with response:
        for chunk in response.iter_content(READ_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            line.advance(len(chunk), rows=chunk.count(b"\n"))
            yield chunk
    if size != part["bytes"] or digest.hexdigest() != part["sha256"]:
        raise PlatformError(f"part {part['index']} arrived damaged ({size} of {part['bytes']} "
                            "bytes or a wrong checksum); pull again")


def pull(dataset_id: str, path: str | os.PathLike[str] | None = None,
         api_key: str | None = None, *, base_url: str | None = None,
         progress: bool = True) -> Any:
    """Download every part of a dataset: to ``path`` (returns the path) or as rows.

    Public catalog datasets need no key (they are reached by id). The file is written
    atomically.

    Args:
        dataset_id: the dataset's ``ds_...`` id, or its name (the newest set of that name).
        path: a file to write the JSONL to; ``None`` returns the rows.
        api_key: the key (else ``WHILEAI_API_KEY`` or the saved login).
        progress: bytes and rows received, with the rate, on stderr (and a summary);
            False silences it.

    Raises:
        NotFoundError: no such dataset on this account, and it is not public (the message
            names the id or name).

    >>> rows = pull("ds_...")  # doctest: +SKIP
    """
    conn, manifest = _manifest(dataset_id, api_key, base_url)
    total = sum(int(part.get("bytes") or 0) for part in manifest["parts"])
    from whileai.rows.progress import Progress
    with Progress("pull", total, enabled=progress, unit="bytes") as line:
        return _download(conn, manifest, dataset_id, path, line)


def _download(conn: Connection, manifest: dict[str, Any], dataset_id: str,
              path: str | os.PathLike[str] | None, line: Progress) -> Any:
    if path is None:
        rows: list[dict[str, Any]] = []
        with paused_gc():
            for part in manifest["parts"]:
                where = f"{dataset_id} part {part['index']}"
                rows.extend(parse_chunks(_part_chunks(conn, part, line), where))
        return rows
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temp, "wb") as out:
            for part in manifest["parts"]:
                for chunk in _part_chunks(conn, part, line):
                    out.write(chunk)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return str(target)
