"""Every table of the store on one ``MetaData``: what the migrations must build.

The tables are declared by concept (``tables``, ``trace_tables``, ``run_tables``,
``session_tables``), all on ``tables.metadata``; importing them here makes sure it holds every
one of them. Alembic's environment compares the database with it, and the drift test
(``tests/test_server_migrations.py``) asserts that a database migrated to head matches it.

>>> sorted(metadata.tables)[:3]
['accounts', 'agents', 'api_keys']
"""

from __future__ import annotations

from whileai.server.store import run_tables, session_tables, trace_tables
from whileai.server.store.tables import metadata

__all__ = ["metadata"]

# The modules declare their tables on ``metadata`` when imported; named here so none is left out.
_DECLARED = (run_tables, session_tables, trace_tables)
