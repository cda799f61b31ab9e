"""Disabling and enabling a host's ``nova-compute`` service for nova-drs.

Through Nova's own service update (as ``PUT /os-services`` does: the row,
then the ``COMPUTE_STATUS_DISABLED`` trait on its resource providers,
which placement then excludes from every request).  The disabled reason
starts with ``nova-drs: <purpose>``, so that nova-drs enables again only
a service it disabled itself and nobody has changed since.
"""

from nova import exception
from nova.compute import api as compute_api
from oslo_log import log as logging

from nova_drs_scheduler.rebalance import executor

LOG = logging.getLogger(__name__)


class UnknownHostError(LookupError):
    """No nova-compute service on that host."""


def reason_prefix(purpose: str) -> str:
    """The start of the disabled reason nova-drs sets for ``purpose``."""
    return f'nova-drs: {purpose}'


def disabled_reason(purpose: str, reason: str | None) -> str:
    """The service's disabled reason, within Nova's 255 characters."""
    prefix = reason_prefix(purpose)
    return (f'{prefix}: {reason}' if reason else prefix)[:255]


def service(host: str):
    """``host``'s compute service; :class:`UnknownHostError` if none."""
    try:
        return compute_api.HostAPI().service_get_by_compute_host(
            executor.drs_context(), host)
    except (exception.HostMappingNotFound,
            exception.ComputeHostNotFound) as exc:
        raise UnknownHostError(
            f'no nova-compute service on host {host!r} (nova service-list '
            f'names the hosts)') from exc


def ours(found, purpose: str) -> bool:
    """Whether ``found`` is disabled by nova-drs for ``purpose``."""
    return bool(found.disabled) and (
        found.disabled_reason or '').startswith(reason_prefix(purpose))


def disable(host: str, purpose: str, reason: str | None):
    """Disable ``host``'s service unless it is already disabled; returns
    ``(service, whether nova-drs holds the disable for purpose)``."""
    found = service(host)
    if not found.disabled:
        found.disabled = True
        found.disabled_reason = disabled_reason(purpose, reason)
        compute_api.HostAPI().service_update(executor.drs_context(), found)
        LOG.info('DRS %s: disabled nova-compute on %s', purpose, host)
        return found, True
    return found, ours(found, purpose)


def reword(found, purpose: str, reason: str):
    """Give ``found``'s disable for ``purpose`` the new ``reason``, if the
    disable is nova-drs's for that purpose (anyone else's is theirs)."""
    wanted = disabled_reason(purpose, reason)
    if ours(found, purpose) and found.disabled_reason != wanted:
        found.disabled_reason = wanted
        compute_api.HostAPI().service_update(executor.drs_context(), found)
        LOG.info('DRS %s: new disabled reason on %s', purpose, found.host)
    return found


def enable(host: str, purpose: str, disabled_by_drs: bool):
    """Enable ``host``'s service if nova-drs disabled it for ``purpose``
    and nobody changed its reason since; ``(service or None when the host
    is gone, whether enabled)``."""
    try:
        found = service(host)
    except UnknownHostError:
        return None, False
    if not (disabled_by_drs and ours(found, purpose)):
        return found, False
    found.disabled = False
    found.disabled_reason = None
    compute_api.HostAPI().service_update(executor.drs_context(), found)
    LOG.info('DRS %s: enabled nova-compute on %s again', purpose, host)
    return found, True
