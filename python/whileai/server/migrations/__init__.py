"""Alembic migrations of the metadata store; ``store.db.open_store`` runs them at start."""
