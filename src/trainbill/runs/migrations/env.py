"""Alembic environment of the run registry: migrations run on the connection the store opened
(``config.attributes["connection"]``), inside its transaction, so a migration and the check
before it are one unit (and on SQLite hold the write lock: concurrent first uses wait)."""

from __future__ import annotations

from alembic import context

from trainbill.runs.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
