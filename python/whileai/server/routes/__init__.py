"""One router per resource; ``ROUTERS`` is the order the app mounts them in.

Later resources (traces, training runs, pages) add a module here and a line to ``ROUTERS``.
"""

from __future__ import annotations

from whileai.server.routes import account, agents, datasets, public

__all__ = ["ROUTERS"]

ROUTERS = (public.router, account.router, datasets.router, agents.router)
