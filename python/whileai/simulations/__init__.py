"""whileai.simulations: simulate, grade, measure, clean, select and export (``import ... as zps``).

The public surface is re-exported here; internals live in stage folders and may move.
"""

from __future__ import annotations

__all__: list[str] = []
