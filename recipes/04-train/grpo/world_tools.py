"""The agent's two tools as Python functions over the mock world, for GRPOTrainer(tools=...).

TRL builds each tool's schema from the signature and the docstring, runs the calls the policy
makes during generation, and hands the whole exchange (tool calls and results) to the reward.
"""

from __future__ import annotations

import json
from pathlib import Path

import whileai.simulations as zps

_TOOLS = json.loads((Path(__file__).resolve().parents[3] / "examples" / "tools.json")
                    .read_text(encoding="utf-8"))
_WORLD = zps.world(_TOOLS)


def get_order(order_id: str) -> str:
    """Look up an order by id.

    Args:
        order_id: The order's id, as the customer gave it.
    """
    return json.dumps(_WORLD.call("get_order", {"order_id": order_id}))


def refund_order(order_id: str, reason: str) -> str:
    """Refund an order that arrived damaged or never arrived.

    Args:
        order_id: The order's id, as the customer gave it.
        reason: Either "damaged" or "not_delivered".
    """
    return json.dumps(_WORLD.call("refund_order", {"order_id": order_id, "reason": reason}))
