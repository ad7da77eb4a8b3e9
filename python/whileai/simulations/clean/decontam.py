"""Decontamination: drop training rows that copy (or share a task with) an evaluation set.

Rules, in order; a row stops at the first that fires:

1. ``same_task``: its ``scenario_id`` or ``task_id`` is also an eval task.
2. ``verbatim``: a checked field equals an eval text after normalisation (the shared tokeniser,
   so case, punctuation and spacing do not matter, and any script works). Texts shorter than
   ``n`` words are checked by this rule only.
3. ``near``: one eval text's shared n-grams cover at least ``overlap`` of the field's words
   (``overlap=0`` means any shared n-gram).
4. ``semantic`` (only with ``embedder=``): cosine similarity at or above ``similarity``.

Prompts are checked against eval prompts; any other field (a reply) against eval answers and
references, never eval replies. The eval set is indexed once (:func:`build_eval_index`); train
rows stream through in chunks, so a JSONL file larger than memory works with ``output=``: the
file is read ahead on a background thread while the previous chunk is checked, and a kept row
is written back as the line it was read from.

>>> clean, report = decontaminate(
...     [{"prompt": "Where is my order 4412?"}, {"prompt": "Refund my blender please"}],
...     against=[{"prompt": "where is my order 4412"}])
>>> [r["prompt"] for r in clean], report["by_rule"]["verbatim"]
(['Refund my blender please'], 1)
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from os import PathLike
from typing import Any

from whileai import _backend
from whileai._gc import paused_gc
from whileai.errors import ConfigError
from whileai.rows.jsonl_write import write_jsonl
from whileai.rows.progress import Progress
from whileai.simulations.clean.decontam_index import EvalIndex, build_eval_index
from whileai.simulations.clean.decontam_lines import check_jsonl
from whileai.simulations.clean.decontam_stream import passthrough, row_batches
from whileai.simulations.models.embedders import HASH_VERSION

__all__ = [
    "RULES",
    "build_eval_index",
    "decontaminate",
    "format_decontamination",
    "merge_decontamination",
]

RULES = ("same_task", "verbatim", "near", "semantic")
_EXAMPLES = 5
_CALIBRATION_NOTE = (
    "similarity={s} is not calibrated for embedder {e!r}: the hash embedder measures shared "
    "words, not meaning; check the threshold on a few known paraphrase and unrelated pairs"
)


def _field_text(row: dict[str, Any], field: str) -> str | None:
    value = row.get(field)
    return value if isinstance(value, str) and value.strip() else None


def _semantic_fn(embedder: Any) -> Callable[[list[str]], list[list[float]]] | None:
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


def _new_report(index: EvalIndex, fields: tuple[str, ...], **knobs: Any) -> dict[str, Any]:
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


def _check_chunk(
    chunk: list[dict[str, Any]],
    start: int,
    index: EvalIndex,
    fields: tuple[str, ...],
    overlap: float,
    semantic: tuple[Any, float] | None,
    report: dict[str, Any],
) -> list[dict[str, Any] | None]:
    """Return per row the offence (a dict) or None when clean; update the field counters."""
    verdict: list[dict[str, Any] | None] = [None] * len(chunk)
    for key in ("scenario_id", "task_id") if index.task_ids else ():
        prefix = f"{key}:"
        for i, row in enumerate(chunk):
            value = row.get(key)
            if verdict[i] is None and isinstance(value, str) and prefix + value in index.task_ids:
                verdict[i] = {"rule": "same_task", "field": key, "match": value}
    for field in fields:
        texts: list[str] = []
        where: list[int] = []
        missing = 0
        for i, row in enumerate(chunk):
            if verdict[i] is not None:
                continue
            text = row.get(field)
            if isinstance(text, str) and text.strip():
                texts.append(text)
                where.append(i)
            else:
                missing += 1
        report["missing"][field] += missing
        if not texts or index.size(field) == 0:
            continue
        ngrams = index.index_for(field)
        origin = index.origin_for(field)
        exact, best, covered, total, shared = ngrams.check(texts)
        leftover: list[int] = []
        for k, i in enumerate(where):
            if total[k] < index.n:
                report["short_texts"] += 1
            if exact[k] >= 0:
                verdict[i] = {"rule": "verbatim", "field": field, "eval": origin[exact[k]]}
            elif total[k] >= index.n and best[k] >= 0 and covered[k] / total[k] >= overlap:
                verdict[i] = {
                    "rule": "near",
                    "field": field,
                    "eval": origin[best[k]],
                    "overlap": round(covered[k] / total[k], 4),
                    "ngram": " ".join(shared[k]),
                }
            else:
                leftover.append(k)
        if semantic is not None and leftover:
            fn, threshold = semantic
            sub = [texts[k] for k in leftover]
            evals = index.texts_for(field)
            hits = _hash_best(sub, evals) if fn is None else _vector_best(fn, sub, evals)
            for k, (e, sim) in zip(leftover, hits, strict=True):
                if e >= 0 and sim >= threshold:
                    verdict[where[k]] = {
                        "rule": "semantic",
                        "field": field,
                        "eval": origin[e],
                        "similarity": round(sim, 4),
                    }
    for i, v in enumerate(verdict):
        if v is None:
            continue
        report["by_rule"][v["rule"]] += 1
        if v["rule"] != "same_task":
            report["by_field"][v["field"]][v["rule"]] += 1
        _note_example(report, chunk[i], start + i, v)
    return verdict


def _note_example(report: dict[str, Any], row: dict[str, Any], index: int,
                  verdict: dict[str, Any]) -> None:
    """Add a dropped row to the report's examples while there are fewer than five."""
    if len(report["examples"]) < _EXAMPLES:
        example = {"index": index, "scenario_id": row.get("scenario_id"), **verdict}
        example["text"] = (_field_text(row, verdict["field"]) or "")[:120]
        report["examples"].append(example)


def decontaminate(
    rows: Any,
    against: Any,
    *,
    n: int = 8,
    fields: Iterable[str] = ("prompt",),
    overlap: float = 0.8,
    embedder: Any = None,
    similarity: float = 0.85,
    output: str | PathLike[str] | None = None,
    chunk_size: int = 4096,
    progress: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return ``(clean_rows, report)``: the rows no eval source contaminates, and why others went.

    Args:
        rows: train rows: a list, any iterator, a run, or a JSONL path (streamed in chunks).
        against: eval rows, JSONL paths, runs, platform dataset ids (``"ds_..."``, pulled), or
            a prebuilt :class:`EvalIndex`.
        n: n-gram length in words. fields: row keys to check. overlap: share of a text's words
            one eval text must cover (0 = any shared n-gram). embedder / similarity: the
            optional semantic rule. output: write clean rows here as JSONL instead of
            returning them (the returned list is then empty). chunk_size: rows per chunk (a
            JSONL file written to ``output`` goes by blocks of lines instead, natively).
        progress: rows checked and dropped so far on stderr (a self-updating line on a
            terminal, a line every few seconds elsewhere) and a summary; False silences it.

    Raises:
        ConfigError: ``overlap`` or ``similarity`` outside [0, 1], no fields, or an index built
            with another ``n``.
    """
    fields = tuple(fields)
    if not fields or not all(isinstance(f, str) for f in fields):
        raise ConfigError(f"fields= must name at least one row key, got {fields!r}")
    for name, value in (("overlap", overlap), ("similarity", similarity)):
        if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"{name}= must be a number in [0, 1], got {value!r}")
    if isinstance(against, EvalIndex):
        index = against
        if index.n != n:
            raise ConfigError(
                f"the eval index was built with n={index.n} but decontaminate got n={n}; "
                "pass the same n or rebuild the index"
            )
    else:
        from whileai.platform.resolve import resolve_ids

        index = build_eval_index(resolve_ids(against), n=n)
    semantic = None if embedder is None else (_semantic_fn(embedder), float(similarity))
    report = _new_report(
        index, fields, n=n, overlap=overlap, similarity=similarity if embedder else None,
        embedder=None if embedder is None else (embedder if isinstance(embedder, str) else
                                                getattr(embedder, "__name__", "callable")),
        output=None if output is None else str(output),
    )
    counter = {"rows": 0, "bytes": 0}
    line = Progress("decontaminate", len(rows) if isinstance(rows, (list, tuple)) else None,
                    enabled=progress)
    size = _plain_file_size(rows) if line.enabled else 0

    def clean_stream() -> Iterator[Any]:
        for chunk, lines, linenos in row_batches(rows, chunk_size):
            start = counter["rows"]
            verdict = _check_chunk(chunk, start, index, fields, overlap, semantic, report)
            counter["rows"] += len(chunk)
            kept = [k for k, v in enumerate(verdict) if v is None]
            report["kept"] += len(kept)
            if size and lines is not None:  # a plain JSONL file: the bytes read give an ETA
                counter["bytes"] += sum(map(len, lines))
                line.estimate(counter["bytes"] / size)
            line.update(counter["rows"], dropped=counter["rows"] - report["kept"])
            if lines is None or output is None:
                yield from (chunk[k] for k in kept)
            else:
                yield from passthrough([chunk[k] for k in kept], [lines[k] for k in kept],
                                       rows, [linenos[k] for k in kept] if linenos else None)

    if output is not None and semantic is None and isinstance(rows, (str, PathLike)):
        # A JSONL file to a JSONL file: blocks of lines through the native rules.
        def check_rows(chunk: list[dict[str, Any]], start: int) -> list[dict[str, Any] | None]:
            return _check_chunk(chunk, start, index, fields, overlap, None, report)

        def note_drop(row: dict[str, Any], at: int, verdict: dict[str, Any]) -> None:
            _note_example(report, row, at, verdict)

        def on_block(read: int) -> None:
            if size:  # a plain JSONL file: the bytes read give an ETA
                counter["bytes"] += read
                line.estimate(counter["bytes"] / size)
            line.update(counter["rows"], dropped=counter["rows"] - report["kept"])

        source: Iterator[Any] = check_jsonl(rows, index, fields, overlap, report, counter,
                                            check_rows, note_drop, examples=_EXAMPLES,
                                            on_block=on_block)
    else:
        source = clean_stream()
    clean: list[dict[str, Any]] = []
    with paused_gc(), line:  # millions of short-lived acyclic rows: nothing for the collector
        if output is None:
            clean = list(source)
        else:
            write_jsonl(output, source)
    start = counter["rows"]
    report["rows"] = start
    report["dropped"] = start - report["kept"]
    report["rate"] = round(report["dropped"] / start, 4) if start else 0.0
    report["verbatim"] = report["by_rule"]["verbatim"]
    report["near"] = report["by_rule"]["near"]
    _notes(report, index, semantic is not None)
    return clean, report


def _plain_file_size(rows: Any) -> int:
    """The size of an uncompressed JSONL ``rows`` path (0 for anything else)."""
    if not isinstance(rows, (str, PathLike)) or str(rows).endswith(".gz"):
        return 0
    try:
        return os.path.getsize(rows)
    except OSError:
        return 0  # reading it raises the proper error


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
            if len(merged["examples"]) < _EXAMPLES:
                merged["examples"].append({**example, "index": offset + example["index"]})
        offset += int(part["rows"])
    total = merged["rows"]
    merged["dropped"] = total - merged["kept"]
    merged["rate"] = round(merged["dropped"] / total, 4) if total else 0.0
    merged["verbatim"] = merged["by_rule"]["verbatim"]
    merged["near"] = merged["by_rule"]["near"]
    _notes(merged, index, first.get("embedder") is not None)
    return merged


def format_decontamination(report: dict[str, Any]) -> str:
    """Render a :func:`decontaminate` report as a few lines of text.

    >>> print(format_decontamination(decontaminate([{"prompt": "hi"}], against=["hi"])[1]))
    ... # doctest: +ELLIPSIS
    decontaminate: 1 rows, 1 dropped (100.0%), 0 kept | n=8 overlap=0.8
    ...
    """
    head = (
        f"decontaminate: {report['rows']} rows, {report['dropped']} dropped "
        f"({100 * report['rate']:.1f}%), {report['kept']} kept | n={report['n']} "
        f"overlap={report['overlap']}"
    )
    rules = ", ".join(f"{k} {v}" for k, v in report["by_rule"].items())
    lines = [head, f"  by rule: {rules}"]
    for ex in report["examples"]:
        extra = ex.get("overlap", ex.get("similarity", ex.get("match", "")))
        lines.append(
            f"  row {ex['index']} {ex['rule']} ({ex['field']}) {extra} <- {ex.get('eval', '')}: "
            f"{ex['text']!r}"
        )
    lines.extend(f"  note: {note}" for note in report["notes"])
    return "\n".join(lines)
