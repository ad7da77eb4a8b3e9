"""The tool schema many tests hand to ``simulate()`` and the exporters: an order lookup.

A test that needs more tools builds its list from these: ``[GET_ORDER, order_tool(...)]``.
(``test_quickstart.py`` keeps its own copy: it runs the spec's quick start as written.)
"""

from __future__ import annotations

from typing import Any


def order_tool(name: str, description: str) -> dict[str, Any]:
    """An OpenAI-style function tool taking one required ``order_id`` string."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]}}}


GET_ORDER = order_tool("get_order", "Look up an order by id.")
TOOLS = [GET_ORDER]
