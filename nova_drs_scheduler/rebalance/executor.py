"""Start planned moves through Nova's API and follow them to their end.

Each move is an ordinary ``live_migrate`` with the chosen host and
``force=False``: Nova's conductor asks the scheduler to re-validate that
host (filters, server groups) and claims it in placement, exactly as for an
operator's request, and on failure Nova itself leaves the instance ACTIVE on
its source and removes the destination's allocations.

Cooldowns, quarantines and in-flight counts are derived from Nova's own
migration records (:func:`migration_state`), not from memory, so a
scheduler restart forgets nothing that matters.
"""

import dataclasses
import datetime

from nova import context as nova_context
from nova import exception
from nova import objects
from nova.compute import api as compute_api
from oslo_log import log as logging
from oslo_utils import timeutils

LOG = logging.getLogger(__name__)

#: user_id and project_id of the migrations DRS starts: Nova copies them
#: into the Migration record, which is how quarantines find DRS's failures
#: (and ``GET /os-migrations`` needs them set).
DRS_USER = 'nova-drs'

#: Statuses of live and cold migrations that still hold both hosts.
IN_PROGRESS = frozenset(('accepted', 'queued', 'preparing', 'running',
                         'pre-migrating', 'migrating', 'post-migrating'))
FAILED = frozenset(('error', 'failed', 'cancelled'))
DONE = frozenset(('completed', 'done', 'confirmed'))


def drs_context() -> nova_context.RequestContext:
    """An admin context that names DRS as the migrations' owner."""
    return nova_context.RequestContext(
        user_id=DRS_USER, project_id=DRS_USER, is_admin=True,
        roles=['admin'])


@dataclasses.dataclass
class MigrationState:
    """What recent migrations imply for this period."""

    #: {instance uuid: why it may not move now}
    blocked: dict
    #: {host: migrations in flight with the host as source or destination}
    inflight_by_host: dict
    inflight_total: int
    #: {instance uuid: hosts it left by a completed migration within the
    #: no-return time}
    left: dict = dataclasses.field(default_factory=dict)


def migration_state(migrations, now: datetime.datetime, cooldown: int,
                    quarantine: int, no_return: int = 0) -> MigrationState:
    """Blocked instances and in-flight counts from Migration records.

    - in flight (any initiator): the instance is ``migrating`` and counts
      against both hosts' concurrency limits;
    - completed within ``cooldown`` seconds (any initiator): ``cooldown``,
      so no instance bounces back to the host it just left;
    - failed within ``quarantine`` seconds, started by DRS: ``quarantine``;
    - completed within ``no_return`` seconds: its source is in ``left``.
    """
    blocked = {}
    by_host = {}
    total = 0
    now = timeutils.normalize_time(now)
    left = {}
    newest_first = sorted(migrations, key=_changed_at, reverse=True)
    for migration in newest_first:
        uuid = migration.instance_uuid
        age = (now - _changed_at(migration)).total_seconds()
        if (migration.status in DONE and age < no_return and
                migration.source_compute):
            left.setdefault(uuid, set()).add(migration.source_compute)
        if migration.status in IN_PROGRESS:
            total += 1
            for host in {migration.source_compute, migration.dest_compute}:
                if host:
                    by_host[host] = by_host.get(host, 0) + 1
            blocked[uuid] = f'migrating (migration {migration.uuid})'
        elif uuid in blocked:
            continue
        elif migration.status in DONE and age < cooldown:
            blocked[uuid] = (
                f'cooldown: moved {migration.source_compute} -> '
                f'{migration.dest_compute} {int(age)}s ago '
                f'(cooldown {cooldown}s)')
        elif (migration.status in FAILED and age < quarantine and
              migration.user_id == DRS_USER):
            blocked[uuid] = (
                f'quarantine: migration {migration.uuid} to '
                f'{migration.dest_compute} ended {migration.status} '
                f'{int(age)}s ago (quarantine {quarantine}s)')
    return MigrationState(blocked, by_host, total,
                          {uuid: tuple(sorted(hosts))
                           for uuid, hosts in left.items()})


def _changed_at(migration) -> datetime.datetime:
    return timeutils.normalize_time(
        migration.updated_at or migration.created_at)


@dataclasses.dataclass
class _Tracked:
    record_id: str
    migration_uuid: str
    cell: object
    started: datetime.datetime


class Executor:
    """Starts moves and reports how the ones it started ended."""

    def __init__(self):
        self.compute_api = compute_api.API()
        #: {instance uuid: _Tracked} for migrations still running.
        self._tracked = {}

    def start(self, record_id: str, move, cell) -> dict:
        """Start one move; returns its immediate outcome for the record."""
        ctx = drs_context()
        since = timeutils.utcnow() - datetime.timedelta(seconds=1)
        try:
            # Loaded as the REST API does; get() targets ctx at the cell.
            instance = self.compute_api.get(
                ctx, move.instance,
                expected_attrs=['numa_topology', 'system_metadata'])
            self.compute_api.live_migrate(
                ctx, instance, block_migration=None, disk_over_commit=None,
                host_name=move.destination, force=False, async_=False)
        except Exception as exc:  # Nova reports refusals as many types.
            LOG.warning('DRS live migration of %s from %s to %s failed to '
                        'start: %s', move.instance, move.source,
                        move.destination, exc)
            return {'status': 'failed', 'error': _describe(exc),
                    'migration': self._latest_uuid(cell, move.instance, since)}
        migration = self._latest_uuid(cell, move.instance, since)
        if migration is None:
            return {'status': 'unknown',
                    'error': 'no migration record found after the start'}
        self._tracked[move.instance] = _Tracked(
            record_id, migration, cell, timeutils.utcnow())
        LOG.info('DRS started live migration %s of %s: %s -> %s',
                 migration, move.instance, move.source, move.destination)
        return {'status': 'started', 'migration': migration}

    def poll(self, timeout: int) -> list[tuple[str, str, dict]]:
        """``(record_id, instance, outcome)`` of tracked moves that ended,
        or that ran longer than ``timeout`` seconds."""
        ended = []
        ctx = drs_context()
        for instance, tracked in list(self._tracked.items()):
            with nova_context.target_cell(ctx, tracked.cell) as cctxt:
                try:
                    migration = objects.Migration.get_by_uuid(
                        cctxt, tracked.migration_uuid)
                except exception.MigrationNotFound:
                    migration = None
            outcome = _outcome(migration, tracked, timeout)
            if outcome is not None:
                del self._tracked[instance]
                ended.append((tracked.record_id, instance, outcome))
        return ended

    def _latest_uuid(self, cell, instance_uuid: str,
                     since: datetime.datetime) -> str | None:
        """The DRS live migration of the instance created since ``since``."""
        with nova_context.target_cell(drs_context(), cell) as cctxt:
            migrations = objects.MigrationList.get_by_filters(
                cctxt, {'instance_uuid': instance_uuid,
                        'migration_type': 'live-migration',
                        'user_id': DRS_USER},
                sort_keys=['created_at', 'id'], sort_dirs=['desc', 'desc'],
                limit=1)
        if migrations and timeutils.normalize_time(
                migrations[0].created_at) >= since:
            return migrations[0].uuid
        return None


def _outcome(migration, tracked: _Tracked, timeout: int) -> dict | None:
    base = {'migration': tracked.migration_uuid}
    if migration is None:
        return dict(base, status='unknown',
                    error='migration record disappeared')
    if migration.status in DONE:
        return dict(base, status='completed',
                    destination=migration.dest_compute)
    if migration.status in FAILED:
        return dict(base, status='failed',
                    error=f'migration ended {migration.status}')
    elapsed = (timeutils.utcnow() - tracked.started).total_seconds()
    if elapsed > timeout:
        return dict(base, status='timed_out',
                    error=f'still {migration.status} after '
                          f'{int(elapsed)}s; Nova keeps driving it')
    return None


def _describe(exc: Exception) -> str:
    return f'{type(exc).__name__}: {exc}'
