"""An operator's maintenance request, through Nova's API and the DRS
database: ``nova-drs maintenance enter`` and ``exit``.

Entering disables the host's ``nova-compute`` service with Nova's own
service update (as ``PUT /os-services`` does: the row, then the
``COMPUTE_STATUS_DISABLED`` trait on its resource providers, which
placement then excludes from every request), and stores the request, so
that whichever scheduler leads drains the host (``planner``).  Leaving
re-enables the service only if nova-drs disabled it and nobody has changed
its reason since.
"""

from nova import exception
from nova.compute import api as compute_api
from oslo_log import log as logging

from nova_drs_scheduler.rebalance import executor

LOG = logging.getLogger(__name__)

#: The start of the ``disabled_reason`` nova-drs sets: how ``exit`` (and
#: an ``enter`` run again after a failure) knows the disable is its own.
DISABLED_REASON = 'nova-drs: maintenance'


class UnknownHostError(LookupError):
    """No nova-compute service on that host."""


def disabled_reason(reason: str | None) -> str:
    """The service's disabled reason, within Nova's 255 characters."""
    text = f'{DISABLED_REASON}: {reason}' if reason else DISABLED_REASON
    return text[:255]


def _service(host_api, context, host: str):
    try:
        return host_api.service_get_by_compute_host(context, host)
    except (exception.HostMappingNotFound,
            exception.ComputeHostNotFound) as exc:
        raise UnknownHostError(
            f'no nova-compute service on host {host!r} (nova service-list '
            f'names the hosts)') from exc


def _ours(service) -> bool:
    return bool(service.disabled) and (
        service.disabled_reason or '').startswith(DISABLED_REASON)


def enter(store, host: str, reason: str | None) -> dict:
    """Disable the host's compute service (unless already disabled) and
    store the request; the stored row, ``'new'`` True the first time.

    The disable comes first, so that nothing new lands from the moment
    this returns; an ``enter`` run again after a failure finds its own
    disable by its reason.
    """
    host_api = compute_api.HostAPI()
    context = executor.drs_context()
    service = _service(host_api, context, host)
    ours = not service.disabled or _ours(service)
    if not service.disabled:
        service.disabled = True
        service.disabled_reason = disabled_reason(reason)
        host_api.service_update(context, service)
        LOG.info('DRS maintenance: disabled nova-compute on %s', host)
    row = store.enter_maintenance(host, reason, ours)
    return dict(row, service_disabled_reason=service.disabled_reason)


def exit(store, host: str) -> dict:
    """Re-enable the host's compute service if nova-drs disabled it, then
    end the request; the request's row, ``'enabled'`` True if re-enabled.

    Raises the store's ``NotFoundError`` for a host not in maintenance.
    """
    host_api = compute_api.HostAPI()
    context = executor.drs_context()
    found = store.maintenance(host)
    if not found:
        store.exit_maintenance(host)  # raises NotFoundError, naming it
    try:
        service = _service(host_api, context, host)
    except UnknownHostError:
        service = None  # Deleted meanwhile: only the request is left.
    enabled = bool(service and found[0]['disabled_by_drs']
                   and _ours(service))
    if enabled:
        service.disabled = False
        service.disabled_reason = None
        host_api.service_update(context, service)
        LOG.info('DRS maintenance: enabled nova-compute on %s again', host)
    row = store.exit_maintenance(host)
    return dict(row, enabled=enabled,
                service_disabled=bool(service and service.disabled))
