"""The mock world: answers tool calls from the current rollout's records and fires its faults.

>>> w = world([{"name": "get_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string"}}}}])
>>> w.call("get_order", {"order_id": "4412"})["status"]
'ok'
>>> w.call("nope", {})["status"]
'error'
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from typing import Any

from whileai import _backend
from whileai.simulations.agent.spec import AgentSpec, ToolSpec, agent_spec
from whileai.simulations.world.arith import evaluate
from whileai.simulations.world.rollout import RolloutContext, current_rollout
from whileai.simulations.world.toolkinds import WRITES, hidden_kind, name_kind, tool_kind
from whileai.simulations.world.values import is_id_param

__all__ = ["FAULT_KINDS", "World", "fault_result", "world"]

# Conditions of the grid that the mock world realises as a scheduled fault.
FAULT_KINDS = ("timeout", "permission_denied", "malformed", "stale", "not_found")
_LISTING = ("list", "search", "all", "browse")  # a read of these gives a list
# what a write leaves a record as, by the verb of its name
_AFTER = {"cancel": "cancelled", "return": "return requested", "exchange": "exchange requested",
          "delete": "deleted", "remove": "removed", "close": "closed", "suspend": "suspended",
          "resume": "active", "refund": "refunded", "book": "booked"}


def _listing(tool: str, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A short list for a listing read, the same for the same call."""
    seed = _backend.hash64(f"{tool}|{sorted(args.items())!r}")
    return [{"option": n + 1, **dict(args)} for n in range(1 + seed % 4)]


def fault_result(kind: str, tool: str, record: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The tool result a scheduled fault produces."""
    if kind == "timeout":
        return {"status": "error", "error": "timeout", "message": f"{tool} timed out after 30s"}
    if kind == "permission_denied":
        return {"status": "error", "error": "permission_denied",
                "message": f"not authorised to call {tool} for this account"}
    if kind == "malformed":
        return {"status": "ok", "data": "<<\x1b[0m%%ERR 0x1f \ufffd{{null,,}}>>", "malformed": True}
    if kind == "stale":
        data = dict(record or {})
        if "status" in data:
            data["status"] = "pending"
        return {"status": "ok", "data": data, "stale": True, "as_of": "2025-01-01T00:00:00Z"}
    if kind == "not_found":
        return {"status": "not_found", "error": f"{tool}: no matching record"}
    return {"status": "error", "error": kind}


class World:
    """A schema-shaped mock environment for an agent's tools.

    Inside ``simulate`` each rollout has its own records and fault plan (the current rollout),
    and the run's plan wins. Outside a run the records accept any id, and the world schedules
    its own faults: the n-th call to a known tool fails with probability ``fault_rate``, the
    kind drawn from ``FAULT_KINDS``, both decided by ``hash64(seed, n)`` alone, so the same
    sequence of calls meets the same faults every time (``fault_rate=0``, the default of
    ``world()``, never faults).
    """

    cpu_bound = True  # answers from memory: rollouts against it gain nothing from threads

    def __init__(self, spec: AgentSpec, *, fault_rate: float = 0.5, seed: int = 0) -> None:
        self.spec = spec
        self.fault_rate = float(fault_rate)
        self.seed = seed
        self.tools: dict[str, ToolSpec] = {t.name: t for t in spec.tools}
        self.outside_calls = 0  # known-tool calls answered outside a rollout
        self._lock = threading.Lock()

    def _outside_fault(self) -> str | None:
        """The fault (if any) this world schedules for its next call outside a run."""
        with self._lock:
            n = self.outside_calls
            self.outside_calls += 1
        if self.fault_rate <= 0.0:
            return None
        draw = _backend.hash64(f"world|{self.seed}|{n}")
        if draw / 2.0**64 >= self.fault_rate:
            return None
        return FAULT_KINDS[_backend.hash64(f"world-kind|{self.seed}|{n}") % len(FAULT_KINDS)]

    def __repr__(self) -> str:
        return f"World({len(self.tools)} tools, fault_rate={self.fault_rate})"

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Answer one tool call: ``{"status": "ok", "data": ...}`` or an error/fault result."""
        args = dict(arguments or {})
        if tool not in self.tools:
            return {"status": "error", "error": "unknown_tool",
                    "message": f"no tool named {tool!r}; tools: {', '.join(self.tools)}"}
        ctx = current_rollout()
        kind = ctx.next_fault(tool) if ctx is not None else self._outside_fault()
        records = ctx.records if ctx is not None else None
        ids = [str(v) for k, v in args.items() if is_id_param(k) and isinstance(v, str | int)]
        record = records.get(ids[0]) if records is not None and ids else None
        if kind is not None:
            return fault_result(kind, tool, record)
        if ids and records is not None:
            missing = [i for i in ids if i not in records]
            if missing:
                return {"status": "not_found", "error": f"no record with id {missing[0]!r}"}
        spec = self.tools[tool]
        kind = tool_kind(self.spec, tool)
        if kind == "compute":
            if hidden_kind(spec) != "calculate":
                return {"status": "ok", "data": {"noted": True}}
            value = evaluate(args.get("expression"))
            if value is None:
                return {"status": "error", "error": "invalid_expression",
                        "message": "only numbers, + - * / and parentheses can be calculated"}
            return {"status": "ok", "data": {"result": value}}
        if kind == "transfer":
            return {"status": "ok", "data": {"transferred": True}}
        if record is None:  # no id in the call, or no run: echo a plausible record
            record = {p.name: args.get(p.name) for p in spec.params if p.name in args}
            if kind == "read" and not any(is_id_param(p.name) for p in spec.params) and any(
                    w in spec.name.lower().split("_") for w in _LISTING):
                return {"status": "ok", "data": {"results": _listing(spec.name, args)}}
        if kind in WRITES:
            if record.get("status") == "already_processed":
                return {"status": "conflict", "error": "already processed",
                        "data": copy.deepcopy(record)}
            changed = [p.name for p in spec.params if p.name in args and not is_id_param(p.name)]
            record.update({name: args[name] for name in changed})
            verb = next((w for w in tool.lower().split("_") if w in _AFTER), "")
            record["status"] = _AFTER.get(verb, record.get("status") or "updated")
            record["last_action"] = tool
            return {"status": "ok", "data": copy.deepcopy(record)}
        return {"status": "ok", "data": copy.deepcopy(record)}

    @staticmethod
    def _is_write(tool: str) -> bool:
        """Whether a tool known only by its name changes the world (``kinds.name_kind``)."""
        return name_kind(tool) in WRITES

    def context(self) -> RolloutContext | None:
        """The rollout this world is answering right now (None outside a run)."""
        return current_rollout()


def world(
    tools: object = None,
    *,
    system_prompt: str | None = None,
    spec: str | None = None,
    fault_rate: float = 0.0,
    seed: int = 0,
) -> World:
    """Return the mock world for ``tools``: pass it to your agent and call ``.call(tool, args)``.

    Inside ``simulate`` the run's fault plan applies; ``fault_rate``/``seed`` schedule faults
    only for calls made outside a run (see :class:`World`), so an agent can be tried on
    failures before any run.

    >>> world([{"name": "ping"}]).call("ping", {})["status"]
    'ok'
    >>> a, b = (world([{"name": "ping"}], fault_rate=1.0, seed=7) for _ in range(2))
    >>> r = a.call("ping", {})
    >>> r == b.call("ping", {}) and r != {"status": "ok", "data": {}}
    True
    """
    return World(agent_spec(tools=tools, system_prompt=system_prompt, spec=spec),
                 fault_rate=fault_rate, seed=seed)
