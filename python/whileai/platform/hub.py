"""``import_hf``: a Hugging Face split (or a local data file) onto the platform as rows.

``import_hf`` reads whatever ``datasets.load_dataset`` reads (a Hub repo, or a local folder or
file of Parquet, JSONL, CSV or Arrow), maps the columns to row-schema fields, and pushes the rows
(the server profiles them). It runs on the client, so ``wait``/``timeout``/``poll`` have nothing
to wait for; they are accepted for the spec's call form.

Publishing to the Hub (``hf_publish``, ``hf_publish_run``, ``hf_status``) lives in
``simulations/export/hub.py``: it builds on the export stage.

>>> map_columns({"question": "2+2?", "answer": "4", "source": "gsm"})
{'prompt': '2+2?', 'answer': '4', 'source': 'gsm'}
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError

__all__ = ["import_hf", "map_columns"]

_PROMPT = ("prompt", "question", "instruction", "input", "query", "problem")
_REPLY = ("final_text", "completion", "response", "output")
_ANSWER = ("answer", "solution", "gold", "target")
_REWARD = ("reward", "score")


def _first(row: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    for name in names:
        if name in row and row[name] is not None:
            return name, row[name]
    return None, None


@functools.cache
def _structured_fields() -> dict[str, type]:
    """Row-schema fields that hold a list or an object (never text): name -> list or dict."""
    from whileai.rows.schema import row_schema
    found: dict[str, type] = {}
    for name, spec in row_schema()["properties"].items():
        kinds = spec.get("type") or []
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if "string" not in kinds and ("array" in kinds or "object" in kinds):
            found[name] = list if "array" in kinds else dict
    return found


def _decode_nested(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with row-schema list/object fields that arrive as JSON text decoded (the
    Parquet of ``to_hf_folder`` stores them so); text that is not such JSON is left alone."""
    from whileai.rows.depth import loads_limited
    out = dict(record)
    for name, kind in _structured_fields().items():
        value = out.get(name)
        if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
            try:
                parsed = loads_limited(value, where=f"column {name!r}")
            except ValueError:
                continue
            if isinstance(parsed, kind):
                out[name] = parsed
    return out


def map_columns(record: Mapping[str, Any]) -> dict[str, Any]:
    """One dataset record as a row: ``prompt``, ``final_text``, ``answer``, ``reward``,
    ``messages`` read from their usual column names; every other column kept as it is.

    Row-schema fields that hold a list or an object (``steps``, ``messages``, ``world_state``
    ...) and arrive as JSON text, as ``to_hf_folder`` writes them to Parquet, are decoded.

    >>> map_columns({"prompt": "hi", "steps": '[{"tool": "get_order"}]'})["steps"]
    [{'tool': 'get_order'}]
    """
    record = _decode_nested(record)
    row: dict[str, Any] = {}
    used: set[str] = set()
    messages = record.get("messages")
    if isinstance(messages, list) and messages and all(isinstance(m, Mapping) for m in messages):
        row["messages"] = [dict(m) for m in messages]
        used.add("messages")
        users = [m.get("content") for m in messages if m.get("role") == "user"]
        said = [m.get("content") for m in messages if m.get("role") == "assistant"]
        if users:
            row["prompt"] = str(users[0])
        if said:
            row["final_text"] = str(said[-1])
    for field, names in (("prompt", _PROMPT), ("final_text", _REPLY), ("answer", _ANSWER)):
        name, value = _first(record, names)
        if name is not None and field not in row:
            row[field] = value if field == "answer" else str(value)
            used.add(name)
    name, value = _first(record, _REWARD)
    if name is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        row["reward"] = float(value)
        used.add(name)
    row.update({k: v for k, v in record.items() if k not in used and k not in row})
    return row


def import_hf(repo: str, split: str = "train", revision: str | None = None,
              config: str | None = None, name: str | None = None, purpose: str = "train",
              mode: str | None = None, agent: str | None = None,
              description: str | None = None, max_rows: int = 100_000, wait: bool = True,
              timeout: float = 900.0, poll: float = 3.0,
              api_key: str | None = None, *, base_url: str | None = None,
              progress: bool = True) -> dict[str, Any]:
    """Bring one split of a Hugging Face dataset (or a local data folder/file) onto the platform.

    ``base_url`` names the server (default: ``WHILEAI_BASE_URL``, then the saved login).
    ``progress`` shows the rows as they are mapped, then the upload, on stderr (with a summary
    each); ``False`` silences them and the ``datasets`` package's own progress bars.

    Returns:
        The new dataset's entry (``datasetId``, ``rows`` ...).

    Raises:
        ImportError: the ``datasets`` package is missing (``pip install 'whileai[hf]'``).
        ConfigError: the split holds no rows.
    """
    try:
        import datasets  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportError("import_hf needs the datasets package: pip install 'whileai[hf]'") \
            from exc
    from whileai.platform.datasets import push_rows

    path = Path(repo)
    bars = datasets.is_progress_bar_enabled()
    if not progress:
        datasets.disable_progress_bars()
    try:
        if path.is_file():
            kind = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet",
                    ".arrow": "arrow"}.get(path.suffix.lower())
            if kind is None:
                raise ConfigError(f"{repo}: unknown data file type; use .parquet, .jsonl, .csv "
                                  "or .arrow")
            loaded = datasets.load_dataset(kind, data_files={split: str(path)}, split=split)
        else:
            loaded = datasets.load_dataset(repo, config, split=split, revision=revision)
    finally:
        if bars and not progress:
            datasets.enable_progress_bars()
    picked = loaded.select(range(min(max_rows, len(loaded))))
    from whileai.rows.progress import Progress
    with Progress("import_hf", enabled=progress) as line:
        rows = [map_columns(r) for r in line.counted(picked)]
    if not rows:
        raise ConfigError(f"{repo} split {split!r} holds no rows")
    about = description or f"imported from {repo} ({split}{f', {revision}' if revision else ''})"
    entry: dict[str, Any] = push_rows(rows, name or f"{path.name or repo}-{split}",
                                      purpose=purpose, mode=mode, agent=agent,
                                      description=about, gate=False, api_key=api_key,
                                      base_url=base_url, progress=progress)
    return entry
