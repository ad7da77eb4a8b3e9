"""One router per resource; ``ROUTERS`` is the order the app mounts them in.

A new resource adds a module here and a line to ``ROUTERS``; the pages mount in ``app.py``.
"""

from __future__ import annotations

from whileai.server.routes import account, agents, datasets, public, runs, traces

__all__ = ["ROUTERS"]

ROUTERS = (public.router, account.router, datasets.router, agents.router, runs.router,
           runs.plain_router, traces.router)
