"""The live cloud, seen by the CLI: one dry-run period of the rebalancer.

The dry run is the scheduler's own period (same snapshot builder, same
Nova filters for candidates, same planner) continuing the windows and
counters the leading scheduler stores in the DRS database, with nothing
started or stored; ``maintenance plan`` plans drains on its snapshot.
Failures propagate as the libraries raise them; :func:`.errors.classify`
gives each its exit code (the DRS database's own, from
:func:`.db.open_store`).
"""

import contextlib

from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.planning import drain_plan


def dry_run(conf) -> dict:
    """The decision record the rebalancer would produce now."""
    with _rebalancer(conf) as (live, context):
        return live.dry_run(context)


def maintenance_plan(conf, hosts: list[str]) -> drain_plan.Assessment:
    """``hosts`` drained, each alone and as many as can at once
    (:func:`.drain_plan.assess`); an unknown host is a usage error."""
    with _rebalancer(conf) as (live, context):
        snapshot, candidates = live.reader.maintenance_snapshot(
            context, hosts)
        unknown = [name for name in hosts if name not in snapshot.hosts]
        if unknown:
            raise errors.CLIError(
                f'no nova-compute service on host '
                f'{", ".join(map(repr, unknown))} (nova service-list names '
                f'the hosts)', errors.USAGE)
        return drain_plan.assess(snapshot, candidates, hosts)


@contextlib.contextmanager
def _rebalancer(conf):
    """A rebalancer that never acts, over the cloud of nova.conf, and the
    admin context it reads with."""
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
        yield rebalancer.Rebalancer(manager_cls(), client,
                                    servicegroup.API(), leader=None,
                                    store=store), context
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
