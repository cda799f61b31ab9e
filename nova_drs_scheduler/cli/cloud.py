"""The live cloud, seen by the CLI: one dry-run period of the rebalancer.

The dry run is the scheduler's own period (same snapshot builder, same
Nova filters for candidates, same planner) continuing the windows and
counters the leading scheduler stores in the DRS database, with nothing
started or stored.
"""

from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import errors


def dry_run(conf) -> dict:
    """The decision record the rebalancer would produce now."""
    from nova import context as nova_context
    from nova import servicegroup
    from nova.scheduler import host_manager
    from nova.scheduler.client import report
    from oslo_db import exception as db_exc

    from nova_drs_scheduler import drivers
    from nova_drs_scheduler.rebalance import rebalancer
    from nova_drs_scheduler.rebalance.sources import base

    store = db.open_store(conf)
    try:
        manager_cls = drivers.host_manager_class(conf) or \
            host_manager.HostManager
        live = rebalancer.Rebalancer(
            manager_cls(), report.report_client_singleton(),
            servicegroup.API(), leader=None, store=store)
        return live.dry_run(nova_context.get_admin_context())
    except db_exc.DBError as exc:
        raise errors.CLIError(f'cannot reach the Nova or the DRS '
                              f'database: {exc}', errors.CLOUD)
    except base.MetricsUnavailable as exc:
        raise errors.CLIError(f'no metrics: {exc}', errors.CLOUD)
    finally:
        store.close()
