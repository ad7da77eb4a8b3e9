"""Where the viewer's rows come from: a local file or folder, or a platform dataset's parts.

``open_local`` accepts a JSONL file (a ``SimulationData.save``), the same gzipped (by its magic
bytes, whatever the name), or a folder (a Hugging Face folder from ``to_hf_folder``: every
``*.jsonl``, ``*.jsonl.gz`` and, with pyarrow, ``*.parquet`` file under it, the file's stem as
the split). Plain files are indexed by byte offset and read again on demand; gzip and Parquet
rows are kept as their JSON lines. The labels of a local source live beside it
(``rows.jsonl`` -> ``rows.labels.jsonl``; a folder -> ``labels.jsonl`` inside it).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
>>> _ = path.write_text('{"prompt": "a"}\\n\\n{"prompt": "b"}\\n')
>>> source = open_local(path)
>>> len(source.index), source.index.row(1)["prompt"], source.labels.name
(2, 'b', 'rows.labels.jsonl')
"""

from __future__ import annotations

import gzip
import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whileai.errors import ConfigError
from whileai.server.pages.rowindex import RowIndex, build_index

__all__ = ["LocalSource", "dataset_index", "index_files", "open_local"]

_GZIP = b"\x1f\x8b"


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalSource:
    """An indexed local source and the file its hand labels go to."""

    path: Path
    index: RowIndex
    labels: Path


def _is_gzip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(2) == _GZIP


def _plain(path: Path, offsets: array[int], files: list[tuple[Path, int]],
           ) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a plain file and their numbers, recording where each starts."""
    files.append((path, len(offsets)))
    with path.open("rb") as handle:
        at = 0
        for number, line in enumerate(handle, start=1):
            if line.strip():
                offsets.append(at)
                yield number, line
            at += len(line)


def _gzipped(path: Path) -> Iterator[tuple[int, bytes]]:
    with gzip.open(path, "rb") as handle:
        yield from ((n, line) for n, line in enumerate(handle, start=1) if line.strip())


def _parquet_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise ImportError(f"{path} is Parquet: reading it needs pyarrow (pip install pyarrow), "
                          "or write the folder with to_hf_folder(engine='jsonl')") from exc
    number = 0
    for batch in pq.ParquetFile(path).iter_batches():
        for row in batch.to_pylist():
            number += 1
            yield number, json.dumps(row, ensure_ascii=False, default=str).encode("utf-8")


def _folder_files(folder: Path) -> list[Path]:
    found = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")
                   and p.name != "labels.jsonl"
                   and (p.name.endswith((".jsonl", ".jsonl.gz", ".parquet"))))
    if not found:
        raise ConfigError(f"{folder}: no .jsonl, .jsonl.gz or .parquet file in this folder; "
                          "point whileai view at a rows file or a Hugging Face folder")
    return found


def _split(path: Path) -> str:
    return path.name.split(".")[0]


def open_local(path: str | Path) -> LocalSource:
    """Index the rows at ``path`` (see the module docstring).

    Raises:
        ConfigError: the path does not exist, or a folder holds no rows file.
        RowError: a line is not a JSON row (file and line named).
    """
    target = Path(path)
    if not target.exists():
        raise ConfigError(f"{target}: no such file or folder; give a .jsonl, .jsonl.gz, "
                          "a SimulationData.save file or a Hugging Face folder")
    files = _folder_files(target) if target.is_dir() else [target]
    index = index_files(files, splits=target.is_dir())
    labels = target / "labels.jsonl" if target.is_dir() else target.with_name(
        target.name.split(".")[0] + ".labels.jsonl")
    return LocalSource(path=target, index=index, labels=labels)


def index_files(files: list[Path], *, splits: bool = False) -> RowIndex:
    """One index over ``files`` in order (each file's stem its rows' split when ``splits``):
    by byte offset when every file is plain JSONL, else with the lines kept."""
    offsets: array[int] = array("q")
    plain: list[tuple[Path, int]] = []
    every_plain = all(not f.name.endswith(".parquet") and not _is_gzip(f) for f in files)

    def lines() -> Iterator[tuple[bytes, str, str]]:
        for file in files:
            split = _split(file) if splits else ""
            if file.name.endswith(".parquet"):
                source: Iterator[tuple[int, bytes]] = _parquet_lines(file)
            elif _is_gzip(file):
                source = _gzipped(file)
            else:
                source = _plain(file, offsets, plain)
            for number, line in source:
                yield line, split, f"{file.name}: line {number}"

    return build_index(lines(), fetch=_reader(offsets, plain) if every_plain else None)


def _reader(offsets: array[int], files: list[tuple[Path, int]]) -> Any:
    def fetch(position: int) -> bytes:
        path = next(p for p, first in reversed(files) if first <= position)
        with path.open("rb") as handle:
            handle.seek(offsets[position])
            return handle.readline()
    return fetch


def dataset_index(store: Any, account: Any, dataset_id: str) -> RowIndex:
    """The index of a platform dataset's parts (immutable files: read again by offset)."""
    from whileai.server.services import datasets

    count = len(datasets.manifest(store, account, dataset_id).get("parts") or [])
    return index_files([datasets.part_file(store, account, dataset_id, i) for i in range(count)])
