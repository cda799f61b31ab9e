"""An operator's maintenance request, through Nova's API and the DRS
database: ``nova-drs maintenance enter`` and ``exit``.

Entering disables the host's ``nova-compute`` service
(:mod:`.compute_service`) and stores the request, so that whichever
scheduler leads drains the host (``planner``).  Leaving re-enables the
service only if nova-drs disabled it and nobody has changed its reason
since.  While it drains, the leader stores where each drain stands
(:func:`report_drains`).
"""

from oslo_log import log as logging

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


def enter(store, host: str, reason: str | None) -> dict:
    """Disable the host's compute service (unless already disabled) and
    store the request; the stored row, ``'new'`` True the first time.

    The disable comes first, so that nothing new lands from the moment
    this returns; an ``enter`` run again after a failure finds its own
    disable by its reason.  A new ``reason`` replaces the service's
    disabled reason too, while that disable is nova-drs's.
    """
    service, ours = compute_service.disable(host, PURPOSE, reason)
    if reason is not None:
        compute_service.reword(service, PURPOSE, reason)
    row = store.enter_maintenance(host, reason, ours)
    return dict(row, service_disabled_reason=service.disabled_reason)


def exit(store, host: str) -> dict:
    """Re-enable the host's compute service if nova-drs disabled it, then
    end the request; the request's row, ``'enabled'`` True if re-enabled.

    Raises the store's ``NotFoundError`` for a host not in maintenance.
    """
    found = store.maintenance(host)
    if not found:
        store.exit_maintenance(host)  # raises NotFoundError, naming it
    service, enabled = compute_service.enable(
        host, PURPOSE, found[0]['disabled_by_drs'])
    row = store.exit_maintenance(host)
    return dict(row, enabled=enabled,
                service_disabled=bool(service and service.disabled))


def report_drains(store, telemetry, rec: dict, plan: model.Plan,
                  cloud: live.Cloud, maintenance: dict) -> None:
    """Store where each drain of a host in ``maintenance`` stands, for
    ``maintenance status`` and any later leader; log each change of
    state."""
    names = {uuid: instance.display_name or ''
             for uuid, instance in cloud.instances.items()}
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
