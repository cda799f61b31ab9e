"""Incremental reads of the rows the host manager caches, for one cell.

Each query returns either every live row (``since=None``: a full load) or
every row created, updated or soft-deleted at or after ``since``, deleted
ones included, so that the cache can drop what disappeared. Nova
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


def _changed(query: Any, model: Any, since: datetime.datetime | None,
             *also: Any) -> Any:
    """``query`` restricted to the rows changed since ``since`` and those
    matching any of the conditions ``also``."""
    if since is None:
        return query.filter(model.deleted == 0)
    return query.filter(sa.or_(model.created_at >= since,
                               model.updated_at >= since,
                               model.deleted_at >= since, *also))


def _compute_nodes(context: Any, since: datetime.datetime | None,
                   uuids: frozenset = frozenset()) -> list:
    """ComputeNode models of the cell targeted by ``context``, and those
    of ``uuids`` whether they changed or not."""
    query = context.session.query(models.ComputeNode)
    also = [models.ComputeNode.uuid.in_(sorted(uuids))] if uuids else []
    return _changed(query, models.ComputeNode, since, *also).all()


def _compute_services(context: Any, since: datetime.datetime | None) -> list:
    """``nova-compute`` Service models, disabled ones included."""
    query = context.session.query(models.Service).filter(
        models.Service.binary == COMPUTE_BINARY)
    return _changed(query, models.Service, since).all()


def _instance_locations(context: Any,
                       since: datetime.datetime | None) -> list:
    """``(uuid, host, deleted)`` of instances, without loading them."""
    query = context.session.query(
        models.Instance.uuid, models.Instance.host, models.Instance.deleted)
    return _changed(query, models.Instance, since).all()


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
