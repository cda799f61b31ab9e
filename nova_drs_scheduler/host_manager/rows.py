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

``service_flags`` is the one read made at every request: the columns
that decide whether a host may be chosen at all, of the few services
that are disabled or forced down.
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

#: The columns of ``services`` read at every request, in this order after
#: ``host``: what Nova's API writes to take a host out of scheduling or
#: back (``PUT /os-services``), and what ``ComputeFilter`` reads of them.
FLAG_COLUMNS = ('disabled', 'disabled_reason', 'forced_down')


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


@main_db_api.pick_context_manager_reader
def service_flags(context: Any, hosts: frozenset = frozenset()) -> list:
    """``(host, disabled, disabled_reason, forced_down)`` of the live
    ``nova-compute`` services of the cell targeted by ``context`` that are
    disabled or forced down, and of those on ``hosts`` whatever their
    flags.

    The database filters: a cloud has few such services, so the read
    transfers a few rows however many hosts there are (it does scan the
    table: no index covers these columns). ``hosts`` are those the cache
    holds as disabled or forced down: a row of theirs that comes back
    with both flags off was enabled; one that does not come back was
    deleted. Read from the writer database (not a replica), so that a
    change committed before the read is in it.
    """
    table = models.Service.__table__
    flagged = sa.or_(table.c.disabled, table.c.forced_down)
    if hosts:
        flagged = sa.or_(flagged, table.c.host.in_(sorted(hosts)))
    columns = [getattr(table.c, column) for column in FLAG_COLUMNS]
    return context.session.execute(
        sa.select(table.c.host, *columns).where(
            table.c.binary == COMPUTE_BINARY, table.c.deleted == 0,
            flagged)).all()
