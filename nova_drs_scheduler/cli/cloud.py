"""The live cloud, seen by the CLI: one dry-run period of the rebalancer.

The dry run is the scheduler's own period (same snapshot builder, same
Nova filters for candidates, same planner) continuing the windows and
counters the leading scheduler stores in the DRS database, with nothing
started or stored.  Failures propagate as the libraries raise them;
:func:`.errors.classify` gives each its exit code (the DRS database's
own, from :func:`.db.open_store`).
"""

from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import errors


def dry_run(conf) -> dict:
    """The decision record the rebalancer would produce now."""
    from nova import context as nova_context
    from nova import objects
    from nova import servicegroup
    from nova.scheduler import host_manager
    from nova.scheduler.client import report

    from nova_drs_scheduler import drivers
    from nova_drs_scheduler.rebalance import rebalancer

    context = nova_context.get_admin_context()
    # The API database first: unreachable or unmigrated shows here.
    objects.CellMappingList.get_all(context)
    client = report.report_client_singleton()
    _probe_placement(client)
    store = db.open_store(conf)
    try:
        manager_cls = drivers.host_manager_class(conf) or \
            host_manager.HostManager
        live = rebalancer.Rebalancer(manager_cls(), client,
                                     servicegroup.API(), leader=None,
                                     store=store)
        return live.dry_run(context)
    finally:
        store.close()


def _probe_placement(client) -> None:
    """One plain request before the period.

    Nova's client logs missing credentials, an unreachable Keystone or
    placement and answers "no candidates"; asked directly, keystoneauth
    raises the precise error instead.
    """
    response = client.get('/')
    if response.status_code >= 400:
        raise errors.CLIError(
            f'placement answered {response.status_code} to GET /: '
            f'{response.text[:200]}', errors.CLOUD)
