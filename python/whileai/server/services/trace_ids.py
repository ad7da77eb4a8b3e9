"""Short trace ids: a 16-hex id names the one stored 32-hex OTLP trace id it stands for.

A 64-bit trace id (16 hex characters, as older tracers and the docs' examples write them) is
either the W3C form left-padded with zeros, or the first half of a 128-bit id. ``expand_short``
turns each such id into the stored id when exactly one trace of the account matches, and says
which ones match when several do, so a score never lands on a guess.

>>> is_short("4bf92f3577b34da6"), is_short("4bf92f3577b34da6a3ce929d0e0e4736")
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from whileai.server.store.trace_tables import traces

__all__ = ["expand_short", "is_short"]

_SHORT = re.compile(r"[0-9a-f]{16}")


def is_short(trace_id: str) -> bool:
    """Is ``trace_id`` a 64-bit (16-hex) id rather than a full 32-hex OTLP id?"""
    return _SHORT.fullmatch(trace_id) is not None


def expand_short(conn: sa.Connection, account_id: str, items: Sequence[dict[str, Any]],
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(kept, rejected)``: each short ``trace_id`` rewritten to the one stored trace it names.

    An item whose short id starts several traces is rejected with the candidates; an id that
    matches nothing is kept as it is (the caller reports it as unknown).
    """
    kept: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    for item in items:
        short = item["trace_id"]
        if not is_short(short):
            kept.append(item)
            continue
        found = list(conn.execute(sa.select(traces.c.trace_id).where(
            traces.c.account_id == account_id,
            sa.or_(traces.c.trace_id == short.rjust(32, "0"),
                   traces.c.trace_id.startswith(short, autoescape=True)))
            .order_by(traces.c.trace_id).limit(3)).scalars())
        if len(found) > 1:
            rejected.append({"traceId": short, "reason": (
                f"{short} starts several traces ({', '.join(found)}); send the full 32-hex "
                "trace id")})
            continue
        kept.append({**item, "trace_id": found[0]} if found else item)
    return kept, rejected
