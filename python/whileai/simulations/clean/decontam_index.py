"""The eval side of decontamination: every eval source read once into one reusable index.

An :class:`EvalIndex` holds an n-gram index over the eval prompts, another over eval answers and
references (what a reply is checked against; eval *replies* are never a source), the eval task
ids, and where each eval text came from. Build it once with :func:`build_eval_index`, pass it as
``against=`` to as many :func:`~whileai.simulations.clean.decontam.decontaminate` calls as you
like, pickle it, or ship it to worker processes.

>>> index = build_eval_index([[{"prompt": "where is my order 4412", "scenario_id": "sc-1"}]])
>>> index.size("prompt"), sorted(index.task_ids)
(1, ['scenario_id:sc-1'])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from os import PathLike
from typing import Any

from whileai import _backend
from whileai.rows.jsonl import read_jsonl

__all__ = ["ANSWER_KEYS", "EvalIndex", "build_eval_index", "iter_source_rows"]

# Keys of an eval row that hold what a good reply says (checked against train replies).
ANSWER_KEYS = ("answer", "reference", "expected", "expected_answer", "solution", "target")


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalIndex:
    """Prompt and answer n-gram indexes of an eval set, with ids and provenance per text."""

    n: int
    prompts: Any  # _backend.NgramIndex over eval prompts
    answers: Any  # _backend.NgramIndex over eval answers and references
    prompt_texts: tuple[str, ...]
    answer_texts: tuple[str, ...]
    prompt_origin: tuple[str, ...]  # "source[i] row j" per prompt text
    answer_origin: tuple[str, ...]
    task_ids: frozenset[str]
    sources: int
    eval_rows: int

    def index_for(self, field: str) -> Any:
        """The n-gram index a train ``field`` is checked against."""
        return self.prompts if field == "prompt" else self.answers

    def texts_for(self, field: str) -> tuple[str, ...]:
        """The eval texts a train ``field`` is checked against."""
        return self.prompt_texts if field == "prompt" else self.answer_texts

    def origin_for(self, field: str) -> tuple[str, ...]:
        """Where each eval text for ``field`` came from."""
        return self.prompt_origin if field == "prompt" else self.answer_origin

    def size(self, field: str) -> int:
        """How many eval texts a train ``field`` is checked against."""
        return len(self.texts_for(field))


def iter_source_rows(source: Any, what: str) -> Iterator[dict[str, Any]]:
    """Yield row dicts from a JSONL path, a run object or an iterable (strings become prompts)."""
    if isinstance(source, (str, PathLike)):
        yield from read_jsonl(source)
        return
    for attr in ("trajectories", "rows"):
        inner = getattr(source, attr, None)
        if inner is not None and not isinstance(source, dict):
            yield from iter_source_rows(inner() if callable(inner) else inner, what)
            return
    if isinstance(source, dict) or not isinstance(source, Iterable):
        raise TypeError(
            f"{what} must be a list of rows, a JSONL path or a run, got {type(source).__name__}"
        )
    for i, item in enumerate(source):
        if isinstance(item, str):
            yield {"prompt": item}
        elif isinstance(item, dict):
            yield item
        else:
            raise TypeError(f"{what}[{i}] is a {type(item).__name__}, not a row dict or a string")


def _answers(row: dict[str, Any]) -> list[str]:
    out = [row[k] for k in ANSWER_KEYS if isinstance(row.get(k), str) and row[k].strip()]
    privileged = row.get("privileged")
    if isinstance(privileged, dict):
        ref = privileged.get("reference")
        if isinstance(ref, str) and ref.strip():
            out.append(ref)
    return out


def looks_like_path(text: str) -> bool:
    """Whether an ``against=`` string names a file rather than an eval text.

    True for anything that exists on disk, and for one-word strings that end like a data file
    (``.jsonl``, ``.json``, ``.gz``) or contain a path separator; an eval prompt has spaces.

    >>> looks_like_path("evals/math.jsonl"), looks_like_path("what is 2 + 2?")
    (True, False)
    """
    import os
    from pathlib import Path

    if not text or len(text) > 4096 or "\n" in text or "\0" in text:
        return False
    try:
        exists = Path(text).exists()
    except (OSError, ValueError):
        exists = False
    if any(c.isspace() for c in text.strip()):
        return exists
    return (exists or text.endswith((".jsonl", ".json", ".gz", ".jsonl.gz")) or "/" in text
            or os.sep in text)


def _split_sources(against: Any) -> list[Any]:
    """One source, or a list of sources: a list of dicts/strings is one source."""
    if isinstance(against, (str, PathLike)) or hasattr(against, "trajectories"):
        return [against]
    if isinstance(against, (list, tuple)):
        if against and all(isinstance(x, (dict, str)) for x in against):
            texts = [x for x in against if isinstance(x, str)]
            paths = [x for x in texts if looks_like_path(x)]
            if paths and len(paths) == len(against):
                return list(against)  # JSONL paths (a missing one is an error when read)
            if paths:
                raise TypeError(
                    f"against= mixes file paths ({paths[0]!r}) with eval rows or texts; pass "
                    "a list of paths, or the eval rows themselves"
                )
            return [against]
        return list(against)
    raise TypeError(
        f"against= must be eval rows, a JSONL path, a run, or a list of those; "
        f"got {type(against).__name__}"
    )


def build_eval_index(against: Any, *, n: int = 8) -> EvalIndex:
    """Read every eval source once and return the reusable :class:`EvalIndex`.

    Args:
        against: eval rows, a JSONL path, a run, eval prompt strings, or a list of those.
        n: the n-gram length in tokens.

    >>> build_eval_index(["where is my order"], n=2).size("prompt")
    1
    """
    prompts: list[str] = []
    answers: list[str] = []
    p_origin: list[str] = []
    a_origin: list[str] = []
    task_ids: set[str] = set()
    sources = _split_sources(against)
    eval_rows = 0
    for s, source in enumerate(sources):
        for j, row in enumerate(iter_source_rows(source, f"against[{s}]")):
            eval_rows += 1
            for key in ("scenario_id", "task_id"):
                value = row.get(key)
                if isinstance(value, str) and value:
                    task_ids.add(f"{key}:{value}")
            prompt = row.get("prompt")
            if isinstance(prompt, str) and prompt.strip():
                prompts.append(prompt)
                p_origin.append(f"against[{s}] row {j}")
            for text in _answers(row):
                answers.append(text)
                a_origin.append(f"against[{s}] row {j}")
    return EvalIndex(
        n=n,
        prompts=_backend.NgramIndex(prompts, n),
        answers=_backend.NgramIndex(answers, n),
        prompt_texts=tuple(prompts),
        answer_texts=tuple(answers),
        prompt_origin=tuple(p_origin),
        answer_origin=tuple(a_origin),
        task_ids=frozenset(task_ids),
        sources=len(sources),
        eval_rows=eval_rows,
    )
