"""Create, upgrade and check the DRS schema with Alembic.

``nova-drs db sync`` upgrades to the newest revision; ``nova-drs db
version`` prints the current one.  The scheduler refuses to start on a
database that is behind (:func:`check`), naming the command to run.
"""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import script
from alembic.runtime import migration

_LOCATION = os.path.join(os.path.dirname(__file__), 'migrations')


class NotMigratedError(Exception):
    """The DRS database is missing tables or behind the code."""


def _config(connection=None) -> alembic_config.Config:
    config = alembic_config.Config()
    config.set_main_option('script_location', _LOCATION)
    config.attributes['connection'] = connection
    return config


def head() -> str:
    """The newest revision this code knows."""
    return script.ScriptDirectory.from_config(_config()).get_current_head()


def version(engine) -> str | None:
    """The database's revision; None when it was never synced."""
    with engine.connect() as connection:
        return migration.MigrationContext.configure(
            connection).get_current_revision()


def sync(engine) -> str:
    """Upgrade the database to :func:`head`; returns it."""
    with engine.begin() as connection:
        command.upgrade(_config(connection), 'head')
    return head()


def check(engine) -> None:
    """Raise :class:`NotMigratedError` unless at :func:`head`."""
    current, newest = version(engine), head()
    if current != newest:
        raise NotMigratedError(
            f'the DRS database is at revision {current or "none"}, this '
            f'code needs {newest}: run "nova-drs db sync"')
