"""Alembic environment: runs on the connection ``store.db.migrate`` hands over.

``target_metadata`` is every table the store declares (``store.schema``), so Alembic can compare
a database with the code (``alembic.autogenerate.compare_metadata``; the drift test does) and
draft a new revision. The revisions themselves stay explicit operations: frozen history.
"""

from __future__ import annotations

from alembic import context

from whileai.server.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, compare_type=True,
                  render_as_batch=True)  # SQLite alters tables by copying them
with context.begin_transaction():
    context.run_migrations()
