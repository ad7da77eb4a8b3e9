r"""OTLP/JSON export files: one JSON document, documents one after another (the SDK's console
exporter), or JSONL with one export per line.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "spans.json"
>>> _ = path.write_text('{"resourceSpans": []}\n{"resourceSpans": []}\n')
>>> docs, skipped = read_export(path)
>>> len(docs), skipped
(2, 0)
>>> import shutil; shutil.rmtree(path.parent)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from whileai.errors import RowError
from whileai.rows.depth import check_depth, loads_limited
from whileai.rows.jsonl import read_jsonl

__all__ = ["read_export"]


def read_export(path: Path) -> tuple[list[Any], int]:
    """Read an OTLP/JSON file: one JSON document, or JSONL with one export per line.

    Returns the parsed documents and how many lines could not be read.

    Raises:
        RowError: the file does not exist.
    """
    if not path.is_file():
        raise RowError(f"rows_from_otel: no such file {str(path)!r}; pass an OTLP/JSON export")
    data = path.read_bytes()
    try:
        return [loads_limited(data, where=str(path))], 0
    except ValueError:
        docs = _concatenated(data)
        if docs:
            return docs, 0
        reader = read_jsonl(path, strict=False)
        return list(reader), reader.skipped


def _concatenated(data: bytes) -> list[Any]:
    """The documents of a file of JSON documents one after another, each over several lines
    (what the SDK's ``ConsoleSpanExporter`` writes); empty when the file is not that."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return []
    decoder, at = json.JSONDecoder(), 0
    docs: list[Any] = []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return docs if len(docs) > 1 else []
        try:
            doc, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return []
        check_depth(doc, where="console JSON")
        docs.append(doc)
