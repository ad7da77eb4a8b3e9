"""The decontamination stage: the rules over rows in memory, and the report they add up to.

Pure: it takes rows and an :class:`~whileai.simulations.clean.decontam_index.EvalIndex` (no
files, no platform). The ``same_task``, ``verbatim`` and ``near`` rules run in one backend call
per chunk (``DecontamLines.check_rows``: the checked texts read out of the row dicts once, the
rows split across threads, the kept rows handed back as a list); the optional ``semantic`` rule
runs here, field by field, on what those rules keep. The JSONL file path
(:mod:`~whileai.simulations.clean.decontam_lines`) hands its drops and counts to the same
report helpers.

>>> from whileai.simulations.clean.decontam_index import build_eval_index
>>> index = build_eval_index([{"prompt": "where is my order 4412"}])
>>> check = chunk_checker(index, ("prompt",), 0.8, None)
>>> report = new_report(index, ("prompt",), n=8)
>>> [r["prompt"] for r in check([{"prompt": "Where is my order 4412?"}, {"prompt": "hi"}], 0,
...                              report)], report["by_rule"]["verbatim"]
(['hi'], 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from whileai import _backend
from whileai.errors import ConfigError
from whileai.simulations.clean.decontam_index import EvalIndex
from whileai.simulations.models.embedders import HASH_VERSION

__all__ = [
    "EXAMPLES",
    "RULES",
    "ChunkCheck",
    "add_counts",
    "chunk_checker",
    "finish_report",
    "merge_decontamination",
    "new_report",
    "note_example",
    "semantic_fn",
    "verdict_of",
]

RULES = ("same_task", "verbatim", "near", "semantic")
EXAMPLES = 5
MAX_FIELDS = 64  # the kernel reads a row's missing fields as bits of one word
_KEPT = 1
_TASK_KEYS = ("scenario_id", "task_id")
_CALIBRATION_NOTE = (
    "similarity={s} is not calibrated for embedder {e!r}: the hash embedder measures shared "
    "words, not meaning; check the threshold on a few known paraphrase and unrelated pairs"
)

# One chunk: (rows, row number of the first in the stream, report) -> the kept rows.
ChunkCheck = Callable[[list[dict[str, Any]], int, dict[str, Any]], list[dict[str, Any]]]


def _field_text(row: dict[str, Any], field: str) -> str | None:
    value = row.get(field)
    return value if isinstance(value, str) and value.strip() else None


def semantic_fn(embedder: Any) -> Callable[[list[str]], list[list[float]]] | None:
    """Return ``texts -> unit vectors`` for the embedder, or None for the hash embedder."""
    if embedder in ("hash", HASH_VERSION):
        return None
    if isinstance(embedder, str):
        import importlib

        embedders = importlib.import_module("whileai.simulations.models.embedders")
        resolved: Any = embedders.resolve_embedder(embedder)
        if callable(resolved):
            return resolved  # type: ignore[no-any-return]
        raise ConfigError(f"embedder {embedder!r} did not resolve to a callable")
    if callable(embedder):
        return embedder  # type: ignore[no-any-return]
    raise ConfigError(
        f"embedder= must be 'hash' or a callable texts -> vectors, got {type(embedder).__name__}"
    )


def _hash_best(train: list[str], evals: tuple[str, ...], dim: int = 256) -> list[tuple[int, float]]:
    """Per train text: (best eval index, cosine) by integer hash-embedding counts."""
    counts_t = _backend.embed_counts(train, dim)
    counts_e = _backend.embed_counts(list(evals), dim)
    ev = [counts_e[k * dim : (k + 1) * dim] for k in range(len(evals))]
    ev_norm = [sum(c * c for c in v) for v in ev]
    out = []
    for t in range(len(train)):
        vec = counts_t[t * dim : (t + 1) * dim]
        nz = [(b, c) for b, c in enumerate(vec) if c]
        norm = sum(c * c for _, c in nz)
        best, best_sim = -1, 0.0
        for k, v in enumerate(ev):
            if not norm or not ev_norm[k]:
                continue
            dot = sum(c * v[b] for b, c in nz)
            sim = dot / math.sqrt(float(norm * ev_norm[k]))
            if sim > best_sim:
                best, best_sim = k, sim
        out.append((best, best_sim))
    return out


def _vector_best(
    fn: Callable[[list[str]], Any], train: list[str], evals: tuple[str, ...]
) -> list[tuple[int, float]]:
    def unit(vectors: Any) -> list[list[float]]:
        out = []
        for v in vectors:
            vec = [float(x) for x in v]
            norm = math.sqrt(sum(x * x for x in vec))
            out.append([x / norm for x in vec] if norm else vec)
        return out

    tv, ev = unit(fn(train)), unit(fn(list(evals)))
    result = []
    for vec in tv:
        best, best_sim = -1, 0.0
        for k, other in enumerate(ev):
            sim = sum(a * b for a, b in zip(vec, other, strict=True))
            if sim > best_sim:
                best, best_sim = k, sim
        result.append((best, best_sim))
    return result


def new_report(index: EvalIndex, fields: tuple[str, ...], **knobs: Any) -> dict[str, Any]:
    """The empty report of a call checking ``fields`` against ``index`` with ``knobs``."""
    return {
        "rows": 0,
        "kept": 0,
        "dropped": 0,
        "rate": 0.0,
        "by_rule": dict.fromkeys(RULES, 0),
        "by_field": {f: {"verbatim": 0, "near": 0, "semantic": 0} for f in fields},
        "verbatim": 0,
        "near": 0,
        "short_texts": 0,
        "missing": dict.fromkeys(fields, 0),
        "examples": [],
        "eval": {
            "sources": index.sources,
            "rows": index.eval_rows,
            "prompts": index.size("prompt"),
            "answers": index.size("final_text"),
            "tasks": len(index.task_ids),
        },
        "fields": list(fields),
        **knobs,
        "notes": [],
    }


def _rules(index: EvalIndex, fields: tuple[str, ...], overlap: float, tasks: bool) -> Any:
    """The backend's rules for ``fields`` against ``index`` (task ids only with ``tasks``)."""
    return _backend.DecontamLines(
        list(fields), [index.index_for(f) if index.size(f) else None for f in fields],
        sorted(index.task_ids) if tasks else [], float(overlap), index.n)


def verdict_of(drop: tuple[Any, ...], index: EvalIndex,
               fields: tuple[str, ...]) -> dict[str, Any]:
    """The offence dict of a drop the backend reported (``DecontamLines`` drop tuples)."""
    _, rule, f, eval_id, covered, total, shared, matched = drop
    if rule == "same_task":
        return {"rule": rule, "field": _TASK_KEYS[f], "match": matched}
    field = fields[f]
    origin = index.origin_for(field)
    if rule == "verbatim":
        return {"rule": rule, "field": field, "eval": origin[eval_id]}
    return {"rule": rule, "field": field, "eval": origin[eval_id],
            "overlap": round(covered / total, 4), "ngram": " ".join(shared)}


def add_counts(report: dict[str, Any], fields: tuple[str, ...], by_rule: Sequence[int],
               by_field: Sequence[Sequence[int]], missing: Sequence[int], short: int) -> None:
    """Add one backend call's counts (``DecontamLines`` order) to the report."""
    for rule, count in zip(RULES, by_rule, strict=False):
        report["by_rule"][rule] += count
    for field, (verbatim, near), gone in zip(fields, by_field, missing, strict=True):
        report["by_field"][field]["verbatim"] += verbatim
        report["by_field"][field]["near"] += near
        report["missing"][field] += gone
    report["short_texts"] += short


def chunk_checker(index: EvalIndex, fields: tuple[str, ...], overlap: float,
                  semantic: tuple[Any, float] | None) -> ChunkCheck:
    """Return ``check(rows, start, report) -> kept rows``: the rules bound once per call.

    Without the semantic rule a chunk is one backend call; with it, one call per field, the
    semantic rule run on each field's survivors before the next field (the rules' order).
    """
    if semantic is None:
        rules = _rules(index, fields, overlap, True)

        def check(rows: list[dict[str, Any]], start: int,
                  report: dict[str, Any]) -> list[dict[str, Any]]:
            wanted = max(0, EXAMPLES - len(report["examples"]))
            _, kept, *counts, drops = rules.check_rows(rows, wanted)
            add_counts(report, fields, *counts)
            for drop in drops:
                note_example(report, rows[drop[0]], start + drop[0],
                             verdict_of(drop, index, fields))
            report["kept"] += len(kept)
            return kept  # type: ignore[no-any-return]

        return check
    per_field = [(f, _rules(index, (f,), overlap, k == 0)) for k, f in enumerate(fields)]

    def check_semantic(rows: list[dict[str, Any]], start: int,
                       report: dict[str, Any]) -> list[dict[str, Any]]:
        verdict: dict[int, dict[str, Any]] = {}
        alive = list(range(len(rows)))
        for field, rules in per_field:
            sub = [rows[i] for i in alive]
            status, _, *counts, drops = rules.check_rows(sub, len(sub))
            add_counts(report, (field,), *counts)
            for drop in drops:
                verdict[alive[drop[0]]] = verdict_of(drop, index, (field,))
            left = [alive[j] for j, s in enumerate(status)
                    if s == _KEPT and _field_text(rows[alive[j]], field) is not None]
            if left and index.size(field):
                _semantic_rule(rows, left, field, index, semantic, verdict, report)
            alive = [i for i in alive if i not in verdict]
        for i in sorted(verdict):
            note_example(report, rows[i], start + i, verdict[i])
        report["kept"] += len(alive)
        return [rows[i] for i in alive]

    return check_semantic


def _semantic_rule(rows: list[dict[str, Any]], left: list[int], field: str, index: EvalIndex,
                   semantic: tuple[Any, float], verdict: dict[int, dict[str, Any]],
                   report: dict[str, Any]) -> None:
    """The semantic rule on the rows ``left`` (by their ``field``)."""
    fn, threshold = semantic
    sub = [rows[i][field] for i in left]
    evals = index.texts_for(field)
    hits = _hash_best(sub, evals) if fn is None else _vector_best(fn, sub, evals)
    origin = index.origin_for(field)
    for i, (e, sim) in zip(left, hits, strict=True):
        if e >= 0 and sim >= threshold:
            verdict[i] = {"rule": "semantic", "field": field, "eval": origin[e],
                          "similarity": round(sim, 4)}
            report["by_rule"]["semantic"] += 1
            report["by_field"][field]["semantic"] += 1


def _totals(report: dict[str, Any]) -> None:
    total = report["rows"]
    report["dropped"] = total - report["kept"]
    report["rate"] = round(report["dropped"] / total, 4) if total else 0.0
    report["verbatim"] = report["by_rule"]["verbatim"]
    report["near"] = report["by_rule"]["near"]


def finish_report(report: dict[str, Any], rows: int, index: EvalIndex, semantic: bool) -> None:
    """Fill in the totals and notes of a report once ``rows`` rows were checked."""
    report["rows"] = rows
    _totals(report)
    _notes(report, index, semantic)


def note_example(report: dict[str, Any], row: dict[str, Any], index: int,
                  verdict: dict[str, Any]) -> None:
    """Add a dropped row to the report's examples while there are fewer than five."""
    if len(report["examples"]) < EXAMPLES:
        example = {"index": index, "scenario_id": row.get("scenario_id"), **verdict}
        example["text"] = (_field_text(row, verdict["field"]) or "")[:120]
        report["examples"].append(example)


def _notes(report: dict[str, Any], index: EvalIndex, semantic: bool) -> None:
    notes = report["notes"]
    if index.eval_rows == 0:
        notes.append("the eval set is empty: nothing was checked against it")
    for field in report["fields"]:
        if index.size(field) == 0 and index.eval_rows:
            what = "prompts" if field == "prompt" else "answers or references"
            notes.append(f"field {field!r}: the eval set has no {what}, so it was not checked")
        if report["missing"][field]:
            notes.append(f"field {field!r}: {report['missing'][field]} rows have no text there")
    if report["short_texts"]:
        notes.append(
            f"{report['short_texts']} texts are shorter than n={report['n']} words and were "
            "checked for verbatim copies only"
        )
    if semantic:
        notes.append(_CALIBRATION_NOTE.format(s=report["similarity"], e=report["embedder"]))


def merge_decontamination(parts: Sequence[dict[str, Any]], index: EvalIndex) -> dict[str, Any]:
    """Return the report of a whole row stream from the reports of its consecutive slices.

    Each part is what :func:`decontaminate` returned for one slice, given in stream order and
    made with the same knobs against ``index``; the result equals the report of one call over
    the slices joined (counts summed, example row numbers offset by the rows before them, the
    first examples kept, the rate and notes recomputed). The Ray adapter merges with this.

    Args:
        parts: the slices' reports, in stream order (at least one).
        index: the eval index every slice was checked against.

    Returns:
        The merged report.

    Raises:
        ConfigError: no parts, or parts made with different knobs.

    >>> from whileai.simulations import build_eval_index, decontaminate
    >>> idx = build_eval_index([{"prompt": "where is my order 4412"}])
    >>> rows = [{"prompt": "Refund my blender"}, {"prompt": "Where is my order 4412?"}]
    >>> parts = [decontaminate([r], against=idx)[1] for r in rows]
    >>> merge_decontamination(parts, idx) == decontaminate(rows, against=idx)[1]
    True
    """
    if not parts:
        raise ConfigError("merge_decontamination needs at least one report")
    knobs = ("n", "overlap", "similarity", "embedder", "fields", "output", "eval")
    first = parts[0]
    for k, part in enumerate(parts):
        odd = [key for key in knobs if part.get(key) != first.get(key)]
        if odd:
            raise ConfigError(f"report {k} was made with other {', '.join(odd)} than report 0")
    merged = {**first, "examples": [], "notes": []}
    for key in ("rows", "kept", "short_texts"):
        merged[key] = sum(int(p[key]) for p in parts)
    merged["by_rule"] = {rule: sum(int(p["by_rule"][rule]) for p in parts) for rule in RULES}
    merged["by_field"] = {
        field: {rule: sum(int(p["by_field"][field][rule]) for p in parts) for rule in counts}
        for field, counts in first["by_field"].items()
    }
    merged["missing"] = {f: sum(int(p["missing"][f]) for p in parts) for f in first["missing"]}
    offset = 0
    for part in parts:
        for example in part["examples"]:
            if len(merged["examples"]) < EXAMPLES:
                merged["examples"].append({**example, "index": offset + example["index"]})
        offset += int(part["rows"])
    _totals(merged)
    _notes(merged, index, first.get("embedder") is not None)
    return merged
