"""Leakage of source traces into generated rows, and near-duplicate asks.

``leakage_report(generated, sources)`` flags every generated prompt whose hash embedding is at
cosine ``threshold`` or more from a source prompt (exact matches after normalisation are always
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
from whileai.simulations.clean.decontam_index import iter_source_rows
from whileai.simulations.models.embedders import HASH_VERSION
from whileai.simulations.rowsource import as_rows, task_key

__all__ = ["drop_leaky_rows", "format_leakage_report", "leakage_report", "near_duplicate_prompts"]

_DIM = 256


def _prompts(rows: list[dict[str, Any]], field: str) -> list[str]:
    return [r.get(field) if isinstance(r.get(field), str) else "" for r in rows]  # type: ignore[misc]


def leakage_report(
    generated: Any, sources: Any, *, threshold: float = 0.9, field: str = "prompt"
) -> dict[str, Any]:
    """Flag generated rows whose ``field`` is a near copy of a source trace's (hash cosine).

    Returns ``n_rows``, ``n_sources``, ``n_leaky``, ``n_exact``, ``leaky`` (index, source index,
    similarity, exact), ``threshold``, ``embedder`` and ``skipped`` (rows with no text).
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    rows = as_rows(generated, what="generated")
    src = list(iter_source_rows(sources, "sources"))
    gen_texts, src_texts = _prompts(rows, field), _prompts(src, field)
    norm = [" ".join(_backend.tokenize(t)) for t in src_texts]
    exact_of: dict[str, int] = {}
    for j, text in enumerate(norm):
        if text:
            exact_of.setdefault(text, j)
    src_counts = _backend.embed_counts(src_texts, _DIM)
    src_vecs = [
        [(b, c) for b, c in enumerate(src_counts[j * _DIM : (j + 1) * _DIM]) if c]
        for j in range(len(src_texts))
    ]
    src_norms = [sum(c * c for _, c in v) for v in src_vecs]
    gen_counts = _backend.embed_counts(gen_texts, _DIM)
    leaky, skipped = [], 0
    for i, text in enumerate(gen_texts):
        tokens = " ".join(_backend.tokenize(text))
        if not tokens:
            skipped += 1
            continue
        if tokens in exact_of:
            leaky.append({"index": i, "source": exact_of[tokens], "similarity": 1.0, "exact": True})
            continue
        vec = gen_counts[i * _DIM : (i + 1) * _DIM]
        n_sq = sum(c * c for c in vec)
        best, best_sim = -1, 0.0
        for j, sv in enumerate(src_vecs):
            if not src_norms[j] or not n_sq:
                continue
            sim = sum(c * vec[b] for b, c in sv) / math.sqrt(float(n_sq * src_norms[j]))
            if sim > best_sim:
                best, best_sim = j, sim
        if best >= 0 and best_sim >= threshold:
            leaky.append({"index": i, "source": best, "similarity": round(best_sim, 4),
                          "exact": False})
    return {
        "n_rows": len(rows),
        "n_sources": len(src),
        "n_leaky": len(leaky),
        "n_exact": sum(x["exact"] for x in leaky),
        "leaky": leaky,
        "threshold": threshold,
        "field": field,
        "embedder": HASH_VERSION,
        "skipped": skipped,
    }


def drop_leaky_rows(
    rows: Any, sources: Any, *, threshold: float = 0.9, field: str = "prompt"
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return ``(kept_rows, leakage_report)``: flagged rows are removed, never rewritten.

    >>> kept, rep = drop_leaky_rows([{"prompt": "a b c"}, {"prompt": "x"}], [{"prompt": "A b c"}])
    >>> [r["prompt"] for r in kept], rep["dropped"]
    (['x'], 1)
    """
    items = as_rows(rows)
    report = leakage_report(items, sources, threshold=threshold, field=field)
    bad = {x["index"] for x in report["leaky"]}
    kept = [r for i, r in enumerate(items) if i not in bad]
    report["dropped"] = len(bad)
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
