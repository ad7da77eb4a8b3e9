"""The platform client (``requests`` only): datasets, agents, traces and the account on a server.

The server is ``whileai serve`` (extra ``server``) or any host that speaks the same API. The
key and URL come from the arguments, ``WHILEAI_API_KEY`` / ``WHILEAI_BASE_URL``, or
``whileai login``.

>>> from whileai.platform import push_rows, pull  # doctest: +SKIP
"""

from __future__ import annotations

from whileai.platform.account import (
    account,
    create_key,
    issue_delegated_credential,
    list_keys,
    refresh_delegated_credential,
    revoke_key,
    signup,
)
from whileai.platform.agents import agents, purge_agent, register_agent
from whileai.platform.datasets import pull, push_file, push_rows
from whileai.platform.errors import (
    KeyRefusedError,
    NoKeyError,
    NotFoundError,
    PlatformError,
    PlatformQuotaError,
    RequestTooLargeError,
    UnreachableError,
)
from whileai.platform.hub import import_hf

# after the submodule ``datasets`` has loaded (loading binds ``whileai.platform.datasets`` to it):
# the function of that name must be what the package exposes
from whileai.platform.manage import (
    catalog,
    datasets,
    delete_dataset,
    delete_empty_datasets,
    preview,
    profile,
    publish,
    unpublish,
    update_dataset,
)
from whileai.platform.traces import cut, cuts, format_cuts, list_traces, send_score

__all__ = [
    "KeyRefusedError",
    "NoKeyError",
    "NotFoundError",
    "PlatformError",
    "PlatformQuotaError",
    "RequestTooLargeError",
    "UnreachableError",
    "account",
    "agents",
    "catalog",
    "create_key",
    "cut",
    "cuts",
    "datasets",
    "delete_dataset",
    "delete_empty_datasets",
    "format_cuts",
    "import_hf",
    "issue_delegated_credential",
    "list_keys",
    "list_traces",
    "preview",
    "profile",
    "publish",
    "pull",
    "purge_agent",
    "push_file",
    "push_rows",
    "refresh_delegated_credential",
    "register_agent",
    "revoke_key",
    "send_score",
    "signup",
    "unpublish",
    "update_dataset",
]
