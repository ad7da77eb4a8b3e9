"""The runs API over HTTP: what a run sender calls to reach ``whileai serve``.

Routes (under the platform's base URL, with the account's key):
``POST /v1/runs`` (create, idempotent on the client-made id), ``POST /v1/runs/{id}/log``,
``POST /v1/runs/{id}/events`` (notes, alarms, holdout, delta), ``POST /v1/runs/{id}/finish``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whileai.errors import ConfigError
from whileai.platform.credentials import find_key
from whileai.platform.http import Connection, call, connect, json_of

__all__ = ["HttpRunsTransport", "configured_runs_transport"]


class HttpRunsTransport:
    """The runs API through the platform connection (auth, error mapping).

    The sending calls try once: the :class:`~whileai.simulations.training.sender.RunSender`
    that drives them is the one layer that retries (the lines wait on disk meanwhile).
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def _post(self, path: str, body: Mapping[str, Any]) -> Any:
        return json_of(call(self.conn, "POST", path, json=dict(body), retry=False))

    def create_run(self, header: Mapping[str, Any]) -> None:
        self._post("/v1/runs", {
            "id": header["id"], "name": header.get("name"),
            "dataset_id": header.get("dataset"), "holdout_id": header.get("holdout"),
            "base_model": header.get("base_model"), "total_steps": header.get("total_steps"),
            "trainer": header.get("trainer"), "config": header.get("config") or {},
        })

    def log_points(self, run_id: str, points: Sequence[Mapping[str, Any]]) -> None:
        self._post(f"/v1/runs/{run_id}/log", {"points": list(points)})

    def log_events(self, run_id: str, events: Sequence[Mapping[str, Any]]) -> None:
        self._post(f"/v1/runs/{run_id}/events", {"events": list(events)})

    def finish_run(self, run_id: str, header: Mapping[str, Any]) -> None:
        self._post(f"/v1/runs/{run_id}/finish", {
            "status": header.get("status"), "summary": header.get("summary") or {},
            "adapter": header.get("adapter"),
        })

    def get_run(self, run_id: str) -> dict[str, Any]:
        found: dict[str, Any] = json_of(call(self.conn, "GET", f"/v1/runs/{run_id}"))
        return found


def configured_runs_transport(*, required: bool = False) -> HttpRunsTransport | None:
    """The runs API of the configured platform, or None when no key is configured.

    Raises:
        ConfigError: ``required`` and no platform key is configured.
    """
    if find_key() is None:
        if required:
            raise ConfigError(
                "this needs a platform: set WHILEAI_API_KEY (and WHILEAI_BASE_URL) or run "
                "`whileai login`; or pass server=False to keep the run in a local folder"
            )
        return None
    return HttpRunsTransport(connect())
