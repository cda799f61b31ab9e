"""Incremental reads of the rows the host manager caches, for one cell.

Each query returns either every live row (``since=None``: a full load) or
every row created, updated or soft-deleted at or after ``since``, deleted
ones included, so that the cache can drop what disappeared. The rows are
plain result rows, not ORM objects: most rows an incremental read returns
are read again only because they fall inside the timestamp margin, and
are compared and dropped; building an ORM object for each cost more than
the query itself at 10000 compute nodes. Nova
soft-deletes compute nodes, services and instances and stamps
``deleted_at``; a heartbeat or a resource report stamps ``updated_at``.
"""

import collections
import datetime
from typing import Any

import sqlalchemy as sa
from nova.db.main import api as main_db_api
from nova.db.main import models

COMPUTE_BINARY = 'nova-compute'

Changes = collections.namedtuple(
    'Changes', ['compute_nodes', 'services', 'instances'])


def _changed(statement: Any, table: Any, since: datetime.datetime | None,
             *also: Any) -> Any:
    """``statement`` restricted to the rows of ``table`` changed since
    ``since`` and those matching any of the conditions ``also``."""
    if since is None:
        return statement.where(table.c.deleted == 0)
    return statement.where(sa.or_(table.c.created_at >= since,
                                  table.c.updated_at >= since,
                                  table.c.deleted_at >= since, *also))


def _compute_nodes(context: Any, since: datetime.datetime | None,
                   uuids: frozenset = frozenset()) -> list:
    """Rows of ``compute_nodes`` in the cell targeted by ``context``, and
    those of ``uuids`` whether they changed or not."""
    table = models.ComputeNode.__table__
    also = [table.c.uuid.in_(sorted(uuids))] if uuids else []
    return context.session.execute(
        _changed(sa.select(table), table, since, *also)).all()


def _compute_services(context: Any, since: datetime.datetime | None) -> list:
    """Rows of ``nova-compute`` services, disabled ones included."""
    table = models.Service.__table__
    return context.session.execute(_changed(
        sa.select(table).where(table.c.binary == COMPUTE_BINARY),
        table, since)).all()


def _instance_locations(context: Any,
                       since: datetime.datetime | None) -> list:
    """``(uuid, host, deleted)`` of instances, without loading them."""
    table = models.Instance.__table__
    return context.session.execute(_changed(
        sa.select(table.c.uuid, table.c.host, table.c.deleted),
        table, since)).all()


@main_db_api.pick_context_manager_reader
def read_changes(context: Any, since: datetime.datetime | None,
                 node_uuids: frozenset = frozenset()) -> Changes:
    """All three reads in one transaction, so they agree with each other.

    ``node_uuids``: compute nodes read again even if unchanged (those the
    cache left out for incomplete data).
    """
    return Changes(_compute_nodes(context, since, node_uuids),
                   _compute_services(context, since),
                   _instance_locations(context, since))
