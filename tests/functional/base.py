"""Base class for functional tests inside Nova's own harness.

A thin layer over the installed :mod:`nova_drs_scheduler.testing`, which
third parties use too: our tests run on the same code.
"""

from nova import objects

from nova_drs_scheduler.testing import base as drs_testing
from nova_drs_scheduler.testing import fixtures as drs_fixtures

api_paste_config = drs_fixtures.api_paste_config


class DRSFunctionalTestBase(drs_testing.DRSTestCase):
    """Real API, conductor, scheduler, placement and fake-driver computes.

    Subclasses set ``SCHEDULER_MANAGER`` to run our scheduler manager
    instead of Nova's, and call ``self._start_compute(host)`` for each host.
    ``self.cpu_load`` feeds measured CPU through the real compute monitor.
    """

    #: Nova's stock manager unless a test class names ours.
    SCHEDULER_MANAGER = None

    # Helpers shared by the functional tests.

    def _admin_context(self):
        return self.admin_context()

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
        self.publish_cpu(loads)

    def _compute_node(self, host):
        ctx = self._admin_context()
        return objects.ComputeNode.get_first_node_by_host_for_old_compat(
            ctx, host)
