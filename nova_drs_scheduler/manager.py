"""DRSSchedulerManager: Nova's scheduler plus the periodic rebalancer.

``select_destinations`` is Nova's; its placement client hands out
allocation requests that copy fast (``allocation_requests``), and the
``OWNER_NOVA`` trait comes from cached service rows when they can tell
(``owner_trait``) instead of a query to every cell; requests in flight
are counted, so that a rebalance period gives way to them
(``pacing``); one that finds no valid host asks the leader to wake a
host in standby, if any.  Once the service starts, the host manager
refreshes its rows in a thread of its own (``init_host``) until the
service stops.  A
periodic task runs one rebalance period every ``[drs] rebalance_interval``
seconds; tests and the CLI call
:meth:`DRSSchedulerManager.run_rebalance` directly.

Nova evaluates ``@periodic_task(spacing=...)`` when this module is imported,
which may be before nova.conf is parsed.  The decorator therefore carries a
placeholder and ``__init__`` sets the real spacing from the parsed config
on the instance (oslo.service reads ``self._periodic_spacing``).
"""

import oslo_messaging as messaging
from nova import exception
from nova import objects
from nova.scheduler import manager
from oslo_log import log as logging
from oslo_service import periodic_task

from nova_drs_scheduler import allocation_requests
from nova_drs_scheduler import conf
from nova_drs_scheduler import host_manager
from nova_drs_scheduler import owner_trait
from nova_drs_scheduler import pacing
from nova_drs_scheduler.rebalance import coordination
from nova_drs_scheduler.rebalance import leader
from nova_drs_scheduler.rebalance import rebalancer

CONF = conf.CONF
LOG = logging.getLogger(__name__)

_TASK = '_drs_rebalance'
_FLOW_TASK = '_drs_drain_flow'


class DRSSchedulerManager(manager.SchedulerManager):
    """Schedules like Nova and keeps the cloud balanced."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        conf.validate(CONF)
        # Rows cached with bounded staleness; the service may still swap
        # in the host manager ``[scheduler] host_manager`` names.
        self.host_manager = host_manager.CachingHostManager()
        self._set_spacing(_TASK, CONF.drs.rebalance_interval)
        self._set_spacing(_FLOW_TASK, CONF.drs.drain_flow_interval)
        # The leader is made at the first period, in the worker process
        # that runs it (a tooz heartbeat would not survive a fork).
        self.rebalancer = rebalancer.Rebalancer(
            self.host_manager, self.placement_client, self.servicegroup_api)
        # A DRS database that is down or behind stops the service here,
        # with the command to run, rather than failing every period.
        self.rebalancer.prepare()
        self._stopped = False

    @property
    def host_manager(self):
        return self.__dict__.get('_host_manager')

    @host_manager.setter
    def host_manager(self, value) -> None:
        # Swapped in after init_host (``[scheduler] host_manager`` applied
        # to a started service, as the test fixture does): the refresher
        # moves with it, or the old one would refresh on, unowned, after
        # the service stops.
        old = self.__dict__.get('_host_manager')
        self.__dict__['_host_manager'] = value
        if self.__dict__.get('_serving') and old is not value:
            _stop_refresher(old)
            _start_refresher(value)

    def select_destinations(self, context, request_spec=None,
                            filter_properties=None,
                            spec_obj=manager.SchedulerManager._sentinel,
                            instance_uuids=None, return_objects=False,
                            return_alternates=False):
        if spec_obj is self._sentinel:
            spec_obj = objects.RequestSpec.from_primitives(
                context, request_spec, filter_properties)
        owner_trait.require_if_all_upgraded(spec_obj, self.host_manager)
        # Counted in flight: a rebalance period running meanwhile gives
        # way at its next pacing point (``pacing``).
        with pacing.REQUESTS.request():
            try:
                return super().select_destinations(
                    context, spec_obj=spec_obj,
                    instance_uuids=instance_uuids,
                    return_objects=return_objects,
                    return_alternates=return_alternates)
            except messaging.ExpectedException as wrapped:
                # Nova's method hands its NoValidHost to RPC wrapped.  A
                # host in standby may be what was missing: the leader
                # wakes one at its next period (power management).
                exc = wrapped.exc_info[1]
                if isinstance(exc, exception.NoValidHost):
                    self.rebalancer.power.request_wake(
                        f'a request found no valid host: {exc}')
                raise

    @property
    def placement_client(self):
        return allocation_requests.ReportClient(super().placement_client)

    def _set_spacing(self, task: str, interval: int) -> None:
        """Shadow the class-level spacing read at import time."""
        self._periodic_spacing = dict(self._periodic_spacing,
                                      **{task: interval})
        # Count the first interval from now, not from the import.
        self._periodic_last_run[task] = periodic_task.now()

    @periodic_task.periodic_task(spacing=60, run_immediately=False)
    def _drs_rebalance(self, context):
        self.run_rebalance(context)

    @periodic_task.periodic_task(spacing=5, run_immediately=False)
    def _drs_drain_flow(self, context):
        self.rebalancer.flow(context)

    def run_rebalance(self, context) -> dict:
        """Run one rebalance period now; returns its decision record."""
        # The service may have swapped in another host manager since.
        self.rebalancer.reader.host_manager = self.host_manager
        if self.rebalancer.leader is None:
            self.rebalancer.leader = make_leader(
                self.host, self.servicegroup_api, CONF)
        if CONF.drs.exporter_port:
            self.rebalancer.telemetry.serve(CONF.drs.exporter_host,
                                            CONF.drs.exporter_port)
        return self.rebalancer.run(context)

    def init_host(self, service_ref):
        super().init_host(service_ref)
        # Here rather than in __init__: in the worker process that serves
        # (after the fork), with the host manager the service chose.
        self._serving = True
        _start_refresher(self.host_manager)

    def graceful_shutdown(self, *args, **kwargs):
        # Nova 33 and 34 call this when the service stops; Nova 31 and 32
        # call cleanup_host instead. Nova's part first: Service.stop() stops
        # waiting after manager_shutdown_timeout, and the executors must be
        # shut down within it (Nova's test harness patches that shutdown
        # only until then). Ours needs no executor.
        try:
            super().graceful_shutdown(*args, **kwargs)
        finally:
            self._stop_background()

    def cleanup_host(self):
        super().cleanup_host()
        self._stop_background()

    def _stop_background(self) -> None:
        """Stop what runs besides the requests, once."""
        if self._stopped:
            return
        self._stopped = True
        self._serving = False
        _stop_refresher(self.host_manager)
        # Hand a tooz lock over at once instead of at lease expiry.
        stop = getattr(self.rebalancer.leader, 'stop', None)
        if stop is not None:
            stop()
        self.rebalancer.telemetry.stop()
        self.rebalancer.store.close()

    def reset(self):
        # SIGHUP: re-read the [drs] options; the windows and counters
        # continue from the DRS database.
        super().reset()
        self.rebalancer.reader.reload()


def _start_refresher(host_manager) -> None:
    """Start the background refresh of a host manager that has one."""
    start = getattr(host_manager, 'start_refresher', None)
    if start is not None:
        start()


def _stop_refresher(host_manager) -> None:
    stop = getattr(host_manager, 'stop_refresher', None)
    if stop is not None:
        stop()


def make_leader(host: str, servicegroup_api, conf):
    """tooz when ``[drs] coordination_backend_url`` is set; else Nova's
    own services decide (:class:`~.rebalance.leader.ServiceLeader`)."""
    drs = conf.drs
    if drs.coordination_backend_url:
        return coordination.ToozLeader(
            drs.coordination_backend_url, drs.coordination_lock_name,
            settle=drs.rebalance_interval)
    return leader.ServiceLeader(host, servicegroup_api,
                                conf.oslo_concurrency.lock_path)
