"""Leakage of source traces into generated rows, and near-duplicate asks.

``leakage_report(generated, sources)`` flags every generated prompt whose embedding (the hash
embedder, or any ``texts -> vectors`` callable as ``embedder=``) is at cosine ``threshold`` or
more from a source prompt (exact matches after normalisation are always
flagged); ``drop_leaky_rows`` removes them. ``near_duplicate_prompts`` finds pairs of different
asks whose token sets overlap (Jaccard) at ``threshold`` or more.

>>> rep = leakage_report([{"prompt": "Where is order 4412?"}, {"prompt": "cancel my plan"}],
...                      [{"prompt": "where is ORDER 4412"}])
>>> rep["n_leaky"], rep["leaky"][0]["exact"]
(1, True)
"""

from __future__ import annotations

import math
from typing import Any

from whileai import _backend
from whileai.errors import ConfigError
from whileai.rows.source import as_rows, task_key
from whileai.simulations.clean.decontam_index import iter_source_rows
from whileai.simulations.models.embedders import HASH_VERSION, HashEmbedder, resolve_embedder

__all__ = ["drop_leaky_rows", "format_leakage_report", "leakage_report", "near_duplicate_prompts"]

def _prompts(rows: list[dict[str, Any]], field: str) -> list[str]:
    return [r.get(field) if isinstance(r.get(field), str) else "" for r in rows]  # type: ignore[misc]


def _similarities(
    gen_texts: list[str], src_texts: list[str], embedder: Any
) -> list[tuple[int, float]]:
    """For each generated text, the most similar source (index, cosine); (-1, 0.0) for none."""
    if isinstance(embedder, HashEmbedder):  # exact integer cosines, the same in both backends
        dim = embedder.dim
        src_counts = _backend.embed_counts(src_texts, dim)
        src_vecs = [[(b, c) for b, c in enumerate(src_counts[j * dim : (j + 1) * dim]) if c]
                    for j in range(len(src_texts))]
        src_norms = [sum(c * c for _, c in v) for v in src_vecs]
        gen_counts = _backend.embed_counts(gen_texts, dim)
        out = []
        for i in range(len(gen_texts)):
            vec = gen_counts[i * dim : (i + 1) * dim]
            n_sq = sum(c * c for c in vec)
            best, best_sim = -1, 0.0
            for j, sv in enumerate(src_vecs):
                if not src_norms[j] or not n_sq:
                    continue
                sim = sum(c * vec[b] for b, c in sv) / math.sqrt(float(n_sq * src_norms[j]))
                if sim > best_sim:
                    best, best_sim = j, sim
            out.append((best, best_sim))
        return out
    gen = embedder.embed(gen_texts).rows() if gen_texts else []
    src = embedder.embed(src_texts).rows() if src_texts else []
    if gen and src and len(gen[0]) != len(src[0]):
        raise ConfigError(f"embedder {embedder.name!r} gave vectors of different lengths")
    src_norms_f = [math.sqrt(sum(x * x for x in v)) for v in src]
    out = []
    for vec in gen:
        norm = math.sqrt(sum(x * x for x in vec))
        best, best_sim = -1, 0.0
        for j, sv in enumerate(src):
            if not src_norms_f[j] or not norm:
                continue
            sim = sum(x * y for x, y in zip(vec, sv, strict=True)) / (norm * src_norms_f[j])
            if sim > best_sim:
                best, best_sim = j, sim
        out.append((best, best_sim))
    return out


def _check_knobs(threshold: float, examples: int | None) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not (
            0.0 <= threshold <= 1.0):
        raise ConfigError(f"threshold must be in [0, 1], got {threshold!r}")
    if examples is not None and (isinstance(examples, bool) or not isinstance(examples, int)
                                 or examples < 0):
        raise ConfigError(f"examples must be an int >= 0 or None (all), got {examples!r}")


def leakage_report(
    generated: Any, sources: Any, threshold: float = 0.9, embedder: Any = "hash",
    examples: int | None = 20, *, field: str = "prompt",
) -> dict[str, Any]:
    """Flag generated rows whose ``field`` is a near copy of a source trace's (cosine).

    Args:
        generated: the generated rows (or a JSONL path).
        sources: the source traces.
        threshold: cosine similarity at or above which a row is flagged (exact matches after
            normalisation are always flagged, whatever the embedder says).
        embedder: ``"hash"`` (the built-in hash embedder), ``"hash-v2:<dim>"``, or any callable
            ``texts -> vectors``.
        examples: how many flagged rows ``leaky`` lists (``None``: all); ``n_leaky`` counts all.
        field: the text compared.

    Returns ``n_rows``, ``n_sources``, ``n_leaky``, ``n_exact``, ``leaky`` (index, source index,
    similarity, exact), ``threshold``, ``embedder``, ``examples`` and ``skipped`` (rows with no
    text).

    Raises:
        ConfigError: ``threshold`` outside [0, 1] or a bad ``examples``; an unknown embedder,
            or one that returns malformed vectors.
    """
    _check_knobs(threshold, examples)
    resolved = resolve_embedder(embedder)
    rows = as_rows(generated, what="generated")
    src = list(iter_source_rows(sources, "sources"))
    gen_texts, src_texts = _prompts(rows, field), _prompts(src, field)
    exact_of: dict[str, int] = {}
    for j, text in enumerate(src_texts):
        norm = " ".join(_backend.tokenize(text))
        if norm:
            exact_of.setdefault(norm, j)
    best = _similarities(gen_texts, src_texts, resolved)
    leaky, skipped = [], 0
    for i, text in enumerate(gen_texts):
        tokens = " ".join(_backend.tokenize(text))
        if not tokens:
            skipped += 1
            continue
        if tokens in exact_of:
            leaky.append({"index": i, "source": exact_of[tokens], "similarity": 1.0, "exact": True})
            continue
        j, sim = best[i]
        if j >= 0 and sim >= threshold:
            leaky.append({"index": i, "source": j, "similarity": round(sim, 4), "exact": False})
    return {
        "n_rows": len(rows),
        "n_sources": len(src),
        "n_leaky": len(leaky),
        "n_exact": sum(x["exact"] for x in leaky),
        "leaky": leaky if examples is None else leaky[:examples],
        "threshold": threshold,
        "field": field,
        "embedder": HASH_VERSION if resolved == HashEmbedder() else resolved.name,
        "examples": examples,
        "skipped": skipped,
    }


def drop_leaky_rows(
    rows: Any, sources: Any, threshold: float = 0.9, embedder: Any = "hash",
    examples: int | None = 20, *, field: str = "prompt",
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return ``(kept_rows, leakage_report)``: every flagged row is removed, never rewritten.

    The report lists up to ``examples`` of the dropped rows; ``dropped`` counts them all.

    >>> kept, rep = drop_leaky_rows([{"prompt": "a b c"}, {"prompt": "x"}], [{"prompt": "A b c"}])
    >>> [r["prompt"] for r in kept], rep["dropped"]
    (['x'], 1)
    """
    _check_knobs(threshold, examples)
    items = as_rows(rows)
    report = leakage_report(items, sources, threshold=threshold, embedder=embedder,
                            examples=None, field=field)
    bad = {x["index"] for x in report["leaky"]}
    kept = [r for i, r in enumerate(items) if i not in bad]
    report["dropped"] = len(bad)
    report["examples"] = examples
    if examples is not None:
        report["leaky"] = report["leaky"][:examples]
    return kept, report


def format_leakage_report(report: dict[str, Any]) -> str:
    """One line of totals, then one line per leaky row."""
    lines = [
        f"leakage: {report['n_leaky']} of {report['n_rows']} rows near-copy a source "
        f"({report['n_exact']} exact; cosine >= {report['threshold']}, {report['n_sources']} "
        "sources)"
    ]
    lines.extend(
        f"  row {x['index']} ~ source {x['source']} ({x['similarity']:.3f})"
        for x in report["leaky"][:10]
    )
    return "\n".join(lines)


def near_duplicate_prompts(
    rows: Any, *, threshold: float = 0.9, field: str = "prompt", max_pairs: int = 50
) -> dict[str, Any]:
    """Pairs of different asks whose token sets have Jaccard similarity >= ``threshold``.

    >>> near_duplicate_prompts([{"prompt": "where is my order"}, {"prompt": "Where is my order?"},
    ...                         {"prompt": "refund please"}])["n_pairs"]
    1
    """
    seen: dict[str, frozenset[str]] = {}
    for row in as_rows(rows):
        text = row.get(field)
        if isinstance(text, str) and text.strip():
            key = task_key(row) or text
            seen.setdefault(key, frozenset(_backend.tokenize(text)))
    items = sorted(((k, v) for k, v in seen.items() if v), key=lambda kv: (len(kv[1]), kv[0]))
    pairs: list[dict[str, Any]] = []
    for a in range(len(items)):
        ka, sa = items[a]
        for b in range(a + 1, len(items)):
            kb, sb = items[b]
            if len(sa) < threshold * len(sb):
                break  # sorted by size: later sets are only larger
            inter = len(sa & sb)
            jac = inter / (len(sa) + len(sb) - inter)
            if jac >= threshold:
                pairs.append({"a": ka, "b": kb, "jaccard": round(jac, 4)})
    pairs.sort(key=lambda p: (-p["jaccard"], p["a"], p["b"]))
    return {"n_prompts": len(items), "n_pairs": len(pairs), "threshold": threshold,
            "pairs": pairs[:max_pairs]}
