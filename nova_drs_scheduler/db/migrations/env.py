"""Alembic environment: migrations run on the connection the caller
passes in ``config.attributes['connection']`` (see :mod:`..migration`)."""

from alembic import context

from nova_drs_scheduler.db import tables

config = context.config
context.configure(connection=config.attributes['connection'],
                  target_metadata=tables.metadata,
                  render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
