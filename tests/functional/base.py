"""Base class for functional tests inside Nova's own harness."""

import os
import sys

from nova import context as nova_context
from nova import objects
from nova.tests.functional import integrated_helpers

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler import service
from tests.functional import fixtures as drs_fixtures

CONF = drs_conf.CONF


def api_paste_config() -> str:
    """Nova's api-paste.ini as installed into this virtualenv."""
    return os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')


class DRSFunctionalTestBase(integrated_helpers.ProviderUsageBaseTestCase):
    """Real API, conductor, scheduler, placement and fake-driver computes.

    Subclasses set ``SCHEDULER_MANAGER`` to run our scheduler manager
    instead of Nova's, and call ``self._start_compute(host)`` for each host.
    ``self.cpu_load`` feeds measured CPU through the real compute monitor.
    """

    compute_driver = 'fake.MediumFakeDriver'
    #: Dotted path of the scheduler manager, or None for Nova's stock one.
    SCHEDULER_MANAGER = None
    #: Choose manager and host manager by name from ``[scheduler] driver``
    #: and ``host_manager``, exactly as the nova-drs-scheduler service does.
    SCHEDULER_FROM_CONFIG = False
    #: Extra config applied before services start: {group: {opt: value}}.
    FLAGS = {}

    def setUp(self):
        # Config that must be in place before Nova's services start; like
        # ProviderUsageBaseTestCase's compute_driver, it is set before the
        # parent setUp, which starts the API and the services.
        self.flags(api_paste_config=api_paste_config(), group='wsgi')
        self.flags(compute_monitors=['cpu.virt_driver'])
        for group, values in self.FLAGS.items():
            self.flags(group=None if group == 'DEFAULT' else group, **values)
        self.cpu_load = self.useFixture(drs_fixtures.CPULoadFixture())
        super().setUp()

    def start_service(self, name, host=None, **kwargs):
        if name != 'scheduler':
            return super().start_service(name, host=host, **kwargs)
        if self.SCHEDULER_FROM_CONFIG:
            kwargs['manager'] = service.manager_path(CONF)
        elif self.SCHEDULER_MANAGER:
            kwargs.setdefault('manager', self.SCHEDULER_MANAGER)
        scheduler = super().start_service(name, host=host, **kwargs)
        if self.SCHEDULER_FROM_CONFIG:
            service.apply_host_manager(scheduler.manager, CONF)
        return scheduler

    # Helpers shared by the functional tests.

    def _admin_context(self):
        return nova_context.get_admin_context()

    def _aggregate_with_hosts(self, name, hosts, metadata=None):
        agg = self.admin_api.post_aggregate(
            {'aggregate': {'name': name}})
        for host in hosts:
            self.admin_api.add_host_to_aggregate(agg['id'], host)
        if metadata:
            self.admin_api.post_aggregate_action(
                agg['id'], {'set_metadata': {'metadata': metadata}})
        return agg

    def _publish_cpu(self, loads):
        """Set measured CPU per host and push one sample through Nova."""
        for host, percent in loads.items():
            self.cpu_load.set(host, percent)
        self._run_periodics()

    def _compute_node(self, host):
        ctx = self._admin_context()
        return objects.ComputeNode.get_first_node_by_host_for_old_compat(
            ctx, host)
