"""An operator's maintenance request, through Nova's API and the DRS
database: ``nova-drs maintenance enter`` and ``exit``.

Entering disables the host's ``nova-compute`` service
(:mod:`.compute_service`) and stores the request, so that whichever
scheduler leads drains the host (``planner``).  Leaving re-enables the
service only if nova-drs disabled it and nobody has changed its reason
since.  While it drains, the leader stores where each drain stands
(:func:`report_drains`).

``enter --one-at-a-time`` queues the hosts behind the one draining
(state ``queued``, service left enabled); ``exit`` of the last host
draining starts the first queued one.  The queue lives in the DRS
database: the leader never starts a queued host, it only avoids sending
a drain's instances there (``HostSnapshot.queued``).
"""

from collections.abc import Mapping

from nova import exception
from oslo_log import log as logging

from nova_drs_scheduler import maintenance_states
from nova_drs_scheduler.planning import drain
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import compute_service
from nova_drs_scheduler.rebalance import live

LOG = logging.getLogger(__name__)

#: What the disabled reason says (``nova-drs: maintenance``): how ``exit``
#: (and an ``enter`` run again after a failure) knows the disable is its
#: own.
PURPOSE = 'maintenance'
DISABLED_REASON = compute_service.reason_prefix(PURPOSE)
UnknownHostError = compute_service.UnknownHostError
QUEUED = maintenance_states.QUEUED


def draining(rows: Mapping[str, dict]) -> dict[str, dict]:
    """The rows of ``Store.maintenance_hosts`` the leader drains: every
    host in maintenance but those waiting in the queue."""
    return {host: row for host, row in rows.items()
            if row['state'] != QUEUED}


def queued(rows: Mapping[str, dict]) -> frozenset:
    """The hosts waiting in the maintenance queue: drained later, so a
    drain sends them an instance only when no other host can take it."""
    return frozenset(host for host, row in rows.items()
                     if row['state'] == QUEUED)


def enter(store, host: str, reason: str | None,
          one_at_a_time: bool = False) -> dict:
    """Disable the host's compute service (unless already disabled) and
    store the request; the stored row, ``'new'`` True the first time.

    The disable comes first, so that nothing new lands from the moment
    this returns; an ``enter`` run again after a failure finds its own
    disable by its reason.  A new ``reason`` replaces the service's
    disabled reason too, while that disable is nova-drs's.

    With ``one_at_a_time``, a host enters the queue instead (its service
    untouched) when another host is draining, or when it is queued
    already (it keeps its place).  Without it, a queued host leaves the
    queue and drains now.
    """
    if one_at_a_time:
        rows = store.maintenance_hosts()
        found = rows.get(host)
        if (found is not None and found['state'] == QUEUED) or (
                found is None and draining(rows)):
            return _queue(store, host, reason)
    service, ours = compute_service.disable(host, PURPOSE, reason)
    if reason is not None:
        compute_service.reword(service, PURPOSE, reason)
    row = store.enter_maintenance(host, reason, ours)
    return dict(row, service_disabled_reason=service.disabled_reason)


def _queue(store, host: str, reason: str | None) -> dict:
    """Put ``host`` at the end of the queue (or leave it at its place),
    its service left as it is: it takes new instances until its turn."""
    compute_service.service(host)  # An unknown host is refused now.
    row = store.enter_maintenance(host, reason, False, queued=True)
    return dict(row, service_disabled_reason=None)


def exit(store, host: str) -> dict:
    """Re-enable the host's compute service if nova-drs disabled it, then
    end the request; the request's row, ``'enabled'`` True if re-enabled.

    When no host is left draining, the first queued host starts
    (:func:`start_next`): ``'next'`` says which and how (None when the
    queue is empty or another host still drains).  Its failure leaves
    this exit as it is.  Raises the store's ``NotFoundError`` for a host
    not in maintenance.
    """
    found = store.maintenance(host)
    if not found:
        store.exit_maintenance(host)  # raises NotFoundError, naming it
    service, enabled = compute_service.enable(
        host, PURPOSE, found[0]['disabled_by_drs'])
    row = store.exit_maintenance(host)
    following = None
    if row['state'] != QUEUED and not draining(store.maintenance_hosts()):
        following = start_next(store)
    return dict(row, enabled=enabled,
                service_disabled=bool(service and service.disabled),
                next=following)


def start_next(store) -> dict | None:
    """Start the first queued host's drain: disable its compute service
    (with its stored reason, as ``enter`` would), then make its row a
    drain requested now.  None when the queue is empty; else ``{'host',
    'started', 'service_disabled_reason', 'error'}``: when Nova refuses
    (or no longer knows the host), ``started`` is False, ``error`` says
    why, and the host stays first in the queue.
    """
    first = store.first_queued()
    if first is None:
        return None
    host = first['host']
    try:
        service, ours = compute_service.disable(host, PURPOSE,
                                                first['reason'])
    except (UnknownHostError, exception.NovaException) as exc:
        LOG.warning('DRS maintenance: cannot start the drain of %s, first '
                    'in the queue: %s', host, exc)
        return {'host': host, 'started': False,
                'service_disabled_reason': None, 'error': str(exc)}
    if store.start_queued(host, ours) is None:
        # An exit or an enter of that host came first: theirs stands,
        # and after an exit the service is enabled again.
        if ours and not store.maintenance(host):
            compute_service.enable(host, PURPOSE, ours)
        return None
    LOG.info('DRS maintenance: %s, first in the queue, starts draining',
             host)
    return {'host': host, 'started': True,
            'service_disabled_reason': service.disabled_reason,
            'error': None}


def report_drains(store, telemetry, rec: dict, plan: model.Plan,
                  cloud: live.Cloud, maintenance: dict) -> None:
    """Store where each drain of a host in ``maintenance`` stands, for
    ``maintenance status`` and any later leader; log each change of
    state."""
    names = {uuid: instance.display_name or ''
             for uuid, instance in cloud.instances.items()}
    maintenance = draining(maintenance)
    for found in plan.drains:
        if found.host not in maintenance:
            continue  # Entering standby: ``standby`` follows it.
        now = drain.state(found)
        store.report_maintenance(
            found.host, now, drain.progress(found, names, rec['id']))
        if now == maintenance[found.host]['state']:
            continue
        if now == drain.BLOCKED:
            LOG.warning('DRS maintenance: drain of %s is blocked: %s',
                        found.host, '; '.join(
                            f'{r.subject}: {r.detail or r.rule}'
                            for r in found.blockers))
        else:
            LOG.info('DRS maintenance: host %s is %s (%d instance(s) '
                     'left)', found.host, now, found.instances)
    telemetry.maintenance(store.maintenance())
