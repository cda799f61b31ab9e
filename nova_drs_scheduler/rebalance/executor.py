"""Start planned moves through Nova's API and follow them to their end.

Each move is an ordinary ``live_migrate`` with the chosen host and
``force=False`` (a stopped instance leaving a host in maintenance: a cold
migration, ``resize`` with no flavor and the chosen host, confirmed here once
Nova reports it finished): Nova's conductor asks the scheduler to
re-validate that host (filters, server groups) and claims it in placement,
exactly as for an operator's request, and on failure Nova itself leaves the
instance on its source, in its state, and removes the destination's
allocations.

Cooldowns, quarantines and in-flight counts are derived from Nova's own
migration records (:func:`migration_state`, by the rule the simulator
shares in ``recent_moves``), not from memory, so a scheduler restart
forgets nothing that matters.
"""

import dataclasses
import datetime

from nova import context as nova_context
from nova import exception
from nova import objects
from nova.compute import api as compute_api
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import recent_moves

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
#: A cold migration that awaits its confirmation.
FINISHED = 'finished'
#: A move's outcome when Nova's scheduler refused its destination at
#: start (no valid host there now, e.g. another request took the room):
#: not the instance's fault, so it is not quarantined; only that
#: destination is barred for it for ``[drs] quarantine_time``.
REFUSED = 'refused'
#: ``Migration.migration_type`` of the moves DRS starts, by
#: ``Move.migration``.
MIGRATION_TYPES = {model.LIVE: 'live-migration', model.COLD: 'migration'}


def drs_context() -> nova_context.RequestContext:
    """An admin context that names DRS as the migrations' owner."""
    return nova_context.RequestContext(
        user_id=DRS_USER, project_id=DRS_USER, is_admin=True,
        roles=['admin'])


def _phase(status: str) -> str:
    if status in IN_PROGRESS:
        return recent_moves.IN_FLIGHT
    if status in DONE:
        return recent_moves.DONE
    if status in FAILED:
        return recent_moves.FAILED
    return status


def migration_state(migrations, now: datetime.datetime, cooldown: int,
                    quarantine: int,
                    no_return: int) -> recent_moves.MigrationState:
    """:func:`recent_moves.migration_state` of Nova's Migration records
    (any initiator; only DRS's failures are quarantined)."""
    now = timeutils.normalize_time(now)
    return recent_moves.migration_state(
        (recent_moves.Move(
            instance=m.instance_uuid, phase=_phase(m.status),
            source=m.source_compute, destination=m.dest_compute,
            # A host whose clock runs ahead writes times in the future.
            age=max(0.0, (now - changed_at(m)).total_seconds()),
            by_drs=m.user_id == DRS_USER, ident=m.uuid)
         for m in migrations),
        cooldown, quarantine, no_return)


def changed_at(migration) -> datetime.datetime:
    return timeutils.normalize_time(
        migration.updated_at or migration.created_at)


@dataclasses.dataclass
class _Tracked:
    record_id: str
    #: None until Nova has made the record: a cold migration starts with
    #: a cast, and its record comes later.
    migration_uuid: str | None
    #: None until looked up (moves adopted from an earlier process).
    cell: object
    started: datetime.datetime
    #: When the record still to be found may have been made from.
    since: datetime.datetime | None = None


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
            if move.migration == model.COLD:
                self.compute_api.resize(ctx, instance,
                                        host_name=move.destination)
            else:
                self.compute_api.live_migrate(
                    ctx, instance, block_migration=None,
                    disk_over_commit=None, host_name=move.destination,
                    force=False, async_=False)
        except Exception as exc:  # Nova reports refusals as many types.
            refused = _no_valid_host(exc)
            LOG.warning('DRS %s migration of %s from %s to %s %s: %s',
                        move.migration, move.instance, move.source,
                        move.destination,
                        'refused by Nova\'s scheduler at start (the '
                        'instance is not quarantined; another host is '
                        'tried)' if refused else 'failed to start', exc)
            outcome = {'status': REFUSED if refused else 'failed',
                       'error': _describe(exc),
                       'migration': self._latest_uuid(
                           cell, move.instance, since, move.migration)}
            if refused:
                outcome['destination'] = move.destination
            return outcome
        migration = self._latest_uuid(cell, move.instance, since,
                                      move.migration)
        if migration is None and move.migration != model.COLD:
            return {'status': 'unknown',
                    'error': 'no migration record found after the start'}
        self._tracked[move.instance] = _Tracked(
            record_id, migration, cell, timeutils.utcnow(), since)
        LOG.info('DRS started %s migration %s of %s: %s -> %s',
                 move.migration, migration or '(record not made yet)',
                 move.instance, move.source, move.destination)
        return {'status': 'started', 'migration': migration}

    def adopt(self, record_id: str, instance: str, migration_uuid: str,
              started: datetime.datetime) -> None:
        """Follow a move an earlier scheduler process started."""
        self._tracked[instance] = _Tracked(
            record_id, migration_uuid, None,
            timeutils.normalize_time(started))
        LOG.info('DRS follows migration %s of %s, started by an earlier '
                 'scheduler process', migration_uuid, instance)

    def adopt_starting(self, record_id: str, instance: str,
                       since: datetime.datetime) -> dict:
        """Follow a move an earlier process was starting when it stopped.

        The record was written before the start, so the move may or may
        not have begun: Nova's migration records tell.  Returns the
        move's outcome now (``started`` and followed, or ``not_started``).
        """
        try:
            cell = objects.InstanceMapping.get_by_instance_uuid(
                drs_context(), instance).cell_mapping
        except exception.InstanceMappingNotFound:
            cell = None
        migration = cell and next(filter(None, (
            self._latest_uuid(cell, instance,
                              timeutils.normalize_time(since), kind)
            for kind in MIGRATION_TYPES)), None)
        if not migration:
            return {'status': 'not_started',
                    'error': 'the scheduler stopped before starting it'}
        self.adopt(record_id, instance, migration, since)
        return {'status': 'started', 'migration': migration}

    def poll(self, timeout: int) -> list[tuple[str, str, dict]]:
        """``(record_id, instance, outcome)`` of tracked moves that ended,
        or that ran longer than ``timeout`` seconds."""
        ended = []
        ctx = drs_context()
        for instance, tracked in list(self._tracked.items()):
            if tracked.migration_uuid is None:
                tracked.migration_uuid = self._latest_uuid(
                    tracked.cell, instance, tracked.since, model.COLD)
            if tracked.migration_uuid is None:
                outcome = _overdue(tracked, timeout, 'not created yet')
                if outcome is not None:
                    del self._tracked[instance]
                    ended.append((tracked.record_id, instance, outcome))
                continue
            migration = self._migration(ctx, instance, tracked)
            if migration is not None and migration.status == FINISHED:
                migration = self._confirm(ctx, instance, tracked, migration)
            outcome = _outcome(migration, tracked, timeout)
            if outcome is not None:
                del self._tracked[instance]
                ended.append((tracked.record_id, instance, outcome))
        return ended

    def _confirm(self, ctx, instance: str, tracked: _Tracked, migration):
        """Confirm a finished cold migration of ours; the record after.

        A confirmation that fails is tried again at the next poll: the
        instance waits on its destination, its source's resources held.
        """
        if migration.user_id != DRS_USER:
            return migration
        try:
            self.compute_api.confirm_resize(
                ctx, self.compute_api.get(ctx, instance))
        except Exception as exc:  # Nova reports refusals as many types.
            LOG.warning('DRS could not confirm cold migration %s of %s: %s',
                        migration.uuid, instance, exc)
            return migration
        LOG.info('DRS confirmed cold migration %s of %s', migration.uuid,
                 instance)
        return self._migration(ctx, instance, tracked)

    @staticmethod
    def _migration(ctx, instance: str, tracked: _Tracked):
        """The tracked Migration record, or None if it is gone."""
        if tracked.cell is None:
            try:
                tracked.cell = objects.InstanceMapping.get_by_instance_uuid(
                    ctx, instance).cell_mapping
            except exception.InstanceMappingNotFound:
                return None
        with nova_context.target_cell(ctx, tracked.cell) as cctxt:
            try:
                return objects.Migration.get_by_uuid(
                    cctxt, tracked.migration_uuid)
            except exception.MigrationNotFound:
                return None

    def _latest_uuid(self, cell, instance_uuid: str,
                     since: datetime.datetime,
                     kind: str = model.LIVE) -> str | None:
        """The DRS migration (``kind``: ``Move.migration``) of the instance
        created since ``since``."""
        with nova_context.target_cell(drs_context(), cell) as cctxt:
            migrations = objects.MigrationList.get_by_filters(
                cctxt, {'instance_uuid': instance_uuid,
                        'migration_type': MIGRATION_TYPES[kind],
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
    return _overdue(tracked, timeout, migration.status)


def _overdue(tracked: _Tracked, timeout: int, status: str) -> dict | None:
    """The outcome of a move still ``status`` after ``timeout`` seconds;
    None while it has time left."""
    elapsed = (timeutils.utcnow() - tracked.started).total_seconds()
    if elapsed > timeout:
        return {'migration': tracked.migration_uuid, 'status': 'timed_out',
                'error': f'still {status} after {int(elapsed)}s; Nova keeps '
                         f'driving it'}
    return None


def _no_valid_host(exc: Exception) -> bool:
    """Whether Nova's scheduler refused the destination (``NoValidHost``,
    as raised or as the RPC layer wraps it)."""
    wrapped = getattr(exc, 'exc_info', None)
    if wrapped:
        exc = wrapped[1]
    return isinstance(exc, exception.NoValidHost)


def _describe(exc: Exception) -> str:
    return f'{type(exc).__name__}: {exc}'
