"""DRSSchedulerManager: Nova's scheduler plus the periodic rebalancer.

``select_destinations`` is Nova's, untouched.  A periodic task runs one
rebalance period every ``[drs] rebalance_interval`` seconds; tests and the
CLI call :meth:`DRSSchedulerManager.run_rebalance` directly.

Nova evaluates ``@periodic_task(spacing=...)`` when this module is imported,
which may be before nova.conf is parsed.  The decorator therefore carries a
placeholder and ``__init__`` sets the real spacing from the parsed config
on the instance (oslo.service reads ``self._periodic_spacing``).
"""

from nova.scheduler import manager
from oslo_log import log as logging
from oslo_service import periodic_task

from nova_drs_scheduler import conf
from nova_drs_scheduler.rebalance import leader
from nova_drs_scheduler.rebalance import rebalancer

CONF = conf.CONF
LOG = logging.getLogger(__name__)

_TASK = '_drs_rebalance'


class DRSSchedulerManager(manager.SchedulerManager):
    """Schedules like Nova and keeps the cloud balanced."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        conf.validate(CONF)
        self._set_rebalance_spacing(CONF.drs.rebalance_interval)
        self.rebalancer = rebalancer.Rebalancer(
            self.host_manager, self.placement_client, self.servicegroup_api,
            leader.ServiceLeader(self.host, self.servicegroup_api,
                                 CONF.oslo_concurrency.lock_path))

    def _set_rebalance_spacing(self, interval: int) -> None:
        """Shadow the class-level spacing read at import time."""
        self._periodic_spacing = dict(self._periodic_spacing,
                                      **{_TASK: interval})
        # Count the first interval from now, not from the import.
        self._periodic_last_run[_TASK] = periodic_task.now()

    @periodic_task.periodic_task(spacing=60, run_immediately=False)
    def _drs_rebalance(self, context):
        self.run_rebalance(context)

    def run_rebalance(self, context) -> dict:
        """Run one rebalance period now; returns its decision record."""
        return self.rebalancer.run(context)

    def reset(self):
        # SIGHUP: re-read the [drs] options (windows restart empty).
        super().reset()
        self.rebalancer.reload()
