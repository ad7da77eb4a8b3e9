"""The tool schemas tests hand to ``simulate()``, the agents and the exporters: an order desk.

``TOOLS`` (one order lookup) and ``ORDER_TOOLS`` (lookup and cancel) cover most tests; a test
that needs other names builds its list with ``order_tool``: ``[GET_ORDER, order_tool("refund")]``.
(``test_quickstart.py`` keeps its own copy: it runs the spec's quick start as written.)
"""

from __future__ import annotations

from typing import Any


def order_tool(name: str, description: str | None = None) -> dict[str, Any]:
    """An OpenAI-style function tool taking one required ``order_id`` string.

    >>> order_tool("refund")["function"]["parameters"]["required"]
    ['order_id']
    """
    function: dict[str, Any] = {"name": name}
    if description is not None:
        function["description"] = description
    function["parameters"] = {"type": "object", "properties": {"order_id": {"type": "string"}},
                              "required": ["order_id"]}
    return {"type": "function", "function": function}


GET_ORDER = order_tool("get_order", "Look up an order by id.")
CANCEL_ORDER = order_tool("cancel_order", "Cancel an order.")
TOOLS = [GET_ORDER]
ORDER_TOOLS = [GET_ORDER, CANCEL_ORDER]


def order_tools(*names: str) -> list[dict[str, Any]]:
    """One ``order_tool`` per name, without descriptions, for tests that only need the names.

    >>> [t["function"]["name"] for t in order_tools("get_order", "refund")]
    ['get_order', 'refund']
    """
    return [order_tool(name) for name in names]
