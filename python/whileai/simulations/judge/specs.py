"""A model spec (constitution) as a versioned object.

``load_spec`` takes ``{"source", "traits": [{"id", "name", "principle", "authority"}]}`` (a dict
or a JSON file) and returns a ``Spec`` whose ``version`` is a hash of its content: edit any
principle and the version changes. ``behaviors()`` are the trait ids (for
``delta_report(must_not_regress=...)``); ``stamp_spec(rows, spec)`` tags rows with the version.

>>> spec = load_spec({"source": "demo", "traits": [{"id": "no_hedging", "principle": "Direct."}]})
>>> spec.behaviors(), len(spec.version)
(['no_hedging'], 12)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from whileai.errors import SpecError
from whileai.rows.source import as_rows

__all__ = ["Spec", "Trait", "load_spec", "stamp_spec"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Trait:
    """One principle of a spec."""

    id: str
    name: str
    principle: str
    authority: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """A versioned spec: ``version`` is the first 12 hex digits of a SHA-256 of its content."""

    source: str | None
    traits: tuple[Trait, ...]
    version: str

    def behaviors(self) -> list[str]:
        """The trait ids, in order."""
        return [t.id for t in self.traits]

    def __str__(self) -> str:
        return f"Spec({self.source or 'inline'} @ {self.version}, {len(self.traits)} traits)"


def load_spec(constitution: dict[str, Any] | str | PathLike[str] | Spec) -> Spec:
    """Build a ``Spec`` from a dict or a JSON file.

    Raises:
        SpecError: unreadable file, no ``traits`` list, a trait without ``id``, duplicate ids.
    """
    if isinstance(constitution, Spec):
        return constitution
    where = "spec"
    if isinstance(constitution, (str, PathLike)):
        where = str(constitution)
        try:
            data = json.loads(Path(constitution).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SpecError(f"{where}: cannot read the spec as JSON ({exc})") from None
    else:
        data = constitution
    if not isinstance(data, dict) or not isinstance(data.get("traits"), list):
        raise SpecError(f"{where}: expected {{'source', 'traits': [{{'id', 'principle'}}, ...]}}")
    traits = []
    for i, raw in enumerate(data["traits"]):
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
            raise SpecError(f"{where}: traits[{i}] needs a non-empty string 'id'")
        principle = raw.get("principle") or raw.get("description") or ""
        traits.append(
            Trait(
                id=raw["id"],
                name=str(raw.get("name") or raw["id"]),
                principle=str(principle),
                authority=None if raw.get("authority") is None else str(raw["authority"]),
            )
        )
    ids = [t.id for t in traits]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise SpecError(f"{where}: duplicate trait ids {dupes}")
    source = data.get("source")
    canonical = json.dumps(
        {
            "source": source,
            "traits": [[t.id, t.name, t.principle, t.authority] for t in traits],
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    version = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]
    return Spec(
        source=None if source is None else str(source), traits=tuple(traits), version=version
    )


def stamp_spec(
    rows: Any, spec: Spec | dict[str, Any] | str | PathLike[str]
) -> list[dict[str, Any]]:
    """Copies of ``rows`` tagged with the spec version (``spec_version`` and ``lineage.spec``).

    >>> s = load_spec({"traits": [{"id": "a"}]})
    >>> stamp_spec([{"prompt": "p"}], s)[0]["spec_version"] == s.version
    True
    """
    loaded = load_spec(spec)
    out = []
    for row in as_rows(rows):
        copy = dict(row)
        copy["spec_version"] = loaded.version
        lineage = dict(copy.get("lineage") or {})
        lineage["spec"] = {"version": loaded.version, "source": loaded.source}
        copy["lineage"] = lineage
        out.append(copy)
    return out
