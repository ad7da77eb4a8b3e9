"""The store: SQLAlchemy Core tables, dataset parts on disk, and migrations run at start."""
