"""A dataset named by its ``ds_...`` id or by its name: the id every dataset call sends.

An id goes to the server as it is (the server names an unknown id in its 404). A name is
looked up among the account's datasets (``GET /v1/datasets?name=``); when several share it,
the newest wins, as a tag points at the latest push. Public catalog sets are reached by id.

>>> is_dataset_id("ds_1a2b"), is_dataset_id("ds_ plain text"), is_dataset_id("rows.jsonl")
(True, False, False)
"""

from __future__ import annotations

import re
from urllib.parse import quote

from whileai.platform.errors import NotFoundError
from whileai.platform.http import Connection, call, json_of

__all__ = ["dataset_path", "is_dataset_id", "resolve_dataset"]

_ID = re.compile(r"ds_[0-9A-Za-z_-]+")


def is_dataset_id(value: object) -> bool:
    """Whether ``value`` is a platform dataset id (``ds_`` plus letters and digits)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def resolve_dataset(conn: Connection, ref: str) -> str:
    """The ``ds_`` id of ``ref`` (an id, returned as it is, or a dataset name).

    Raises:
        NotFoundError: no dataset of that name on the account (or no key to look it up).
        TypeError: ``ref`` is not a string.
    """
    if not isinstance(ref, str):
        raise TypeError(f"a dataset is named by its ds_ id or its name (a str), got "
                        f"{type(ref).__name__}")
    if is_dataset_id(ref):
        return ref
    if not ref.strip():
        raise NotFoundError("no dataset given: pass its ds_ id or its name")
    if conn.api_key is None:
        raise NotFoundError(f"no dataset {ref!r}: without an API key a dataset is reached by "
                            "its ds_ id only (names are looked up on your account)")
    found = json_of(call(conn, "GET", "/v1/datasets", params={"name": ref}))["datasets"]
    if not found:
        raise NotFoundError(f"no dataset named {ref!r} on this account (and it is not a ds_ "
                            "id); `whileai datasets` lists yours")
    newest: str = found[0]["datasetId"]
    return newest


def dataset_path(conn: Connection, ref: str, tail: str = "") -> str:
    """``/v1/datasets/<id><tail>`` for ``ref`` (an id or a name).

    >>> dataset_path(Connection(base_url="http://h", api_key=None), "ds_1", "/manifest")
    '/v1/datasets/ds_1/manifest'
    """
    return f"/v1/datasets/{quote(resolve_dataset(conn, ref), safe='')}{tail}"
