"""``/v1/datasets``: push (streamed JSONL body), list, read, change, delete, parts, profile."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import FileResponse
from starlette.concurrency import run_in_threadpool

from whileai.server.routes.deps import MaybeAccount, Reader, StoreDep, Writer
from whileai.server.routes.models import (
    DatasetList,
    DatasetOut,
    DeleteEmptyOut,
    DeleteOut,
    ManifestOut,
    PublishIn,
    PushQuery,
    UpdateIn,
)
from whileai.server.services import datasets, profile
from whileai.server.services.uploads import Upload

__all__ = ["router"]

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])


class _PartResponse(FileResponse):
    chunk_size = 1024 * 1024


@router.post("", response_model=DatasetOut, status_code=201,
             summary="Upload rows as JSONL (request body) into a new dataset")
async def push(request: Request, query: Annotated[PushQuery, Query()], store: StoreDep,
               account: Writer) -> dict[str, Any]:
    """Stream the body to a temp part; the dataset appears only when every byte is stored."""
    new = datasets.NewDataset(**query.model_dump(exclude={"keep_privileged"}))
    upload = await run_in_threadpool(Upload.begin, store, account, new,
                                     keep_privileged=query.keep_privileged)
    try:
        async for chunk in request.stream():
            if upload.add(chunk):  # parsing is CPU work: off the event loop
                await run_in_threadpool(upload.parse)
        return await run_in_threadpool(upload.finish)
    except BaseException:
        upload.abort()
        raise


@router.get("", response_model=DatasetList, summary="Your datasets, newest first")
def list_datasets(store: StoreDep, account: Reader,
                  name: str | None = None) -> dict[str, Any]:
    """Every dataset of the account (or only those called ``name``) plus the storage used."""
    return datasets.list_datasets(store, account, name=name)


@router.post("/delete-empty", response_model=DeleteEmptyOut,
             summary="Delete datasets with no bytes (or at most max_rows rows)")
def delete_empty(store: StoreDep, account: Writer,
                 max_rows: int = Query(0, ge=0, le=2**63 - 1),
                 dry_run: bool = False) -> dict[str, Any]:
    """Permanent unless ``dry_run``."""
    return datasets.delete_empty(store, account, max_rows=max_rows, dry_run=dry_run)


@router.get("/{dataset_id}", response_model=DatasetOut, summary="One dataset's entry")
def get_dataset(dataset_id: str, store: StoreDep, account: Reader) -> dict[str, Any]:
    """The registry entry."""
    return datasets.get(store, account, dataset_id)


@router.patch("/{dataset_id}", response_model=DatasetOut, summary="Change purpose/mode/...")
def update_dataset(dataset_id: str, body: UpdateIn, store: StoreDep,
                   account: Writer) -> dict[str, Any]:
    """Only the fields given change."""
    return datasets.update(store, account, dataset_id, body.model_dump())


@router.delete("/{dataset_id}", response_model=DeleteOut, summary="Delete a dataset")
def delete_dataset(dataset_id: str, store: StoreDep, account: Writer) -> dict[str, Any]:
    """Permanent."""
    return datasets.delete(store, account, dataset_id)


@router.get("/{dataset_id}/manifest", response_model=ManifestOut,
            summary="Every part of a dataset (public sets need no key)")
def manifest(dataset_id: str, store: StoreDep, account: MaybeAccount) -> dict[str, Any]:
    """Read every listed part, in order, to get the whole set."""
    return datasets.manifest(store, account, dataset_id)


@router.get("/{dataset_id}/parts/{index}", response_class=FileResponse,
            summary="The JSONL bytes of one part")
def part(dataset_id: str, index: Annotated[int, Path(ge=0, le=2**31 - 1)], store: StoreDep,
         account: MaybeAccount) -> FileResponse:
    """One immutable part, streamed."""
    path = datasets.part_file(store, account, dataset_id, index)
    return _PartResponse(path, media_type="application/x-ndjson")


@router.get("/{dataset_id}/preview", summary="Three rows and the row-contract report")
def preview(dataset_id: str, store: StoreDep, account: Reader) -> dict[str, Any]:
    """A look before pulling."""
    return profile.preview(store, account, dataset_id)


@router.get("/{dataset_id}/profile", summary="Pass rate, gradient support, tool use, tokens")
def get_profile(dataset_id: str, store: StoreDep, account: Reader,
                force: bool = False) -> dict[str, Any]:
    """Cached until the set changes; ``force`` recomputes."""
    return profile.profile(store, account, dataset_id, force=force)


@router.post("/{dataset_id}/publish", summary="Show a dataset in the public catalog")
def publish(dataset_id: str, body: PublishIn, store: StoreDep,
            account: Writer) -> dict[str, Any]:
    """Returns the card."""
    return datasets.publish(store, account, dataset_id, agent=body.agent,
                            description=body.description)


@router.post("/{dataset_id}/unpublish", response_model=DatasetOut,
             summary="Take a dataset off the catalog")
def unpublish(dataset_id: str, store: StoreDep, account: Writer) -> dict[str, Any]:
    """The data stays on the account."""
    return datasets.unpublish(store, account, dataset_id)
