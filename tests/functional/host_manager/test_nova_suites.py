"""A selection of Nova's own scheduler functional tests over our manager.

Each class reruns one of Nova's test classes unchanged except for the
scheduler manager, ours, with its default options (``max_staleness`` 5 s):
the tests that disable, enable or force down a service and schedule at
once pass because every request reads the services' flags. ``load_tests``
keeps the selection small enough for the functional run to stay short on
two cores.
"""

import unittest

from nova.tests.functional import test_scheduler
from nova.tests.functional import test_server_group
from nova.tests.functional import test_servers

from tests.functional.host_manager import manager


class ServerMovingTests(manager.CachingSchedulerMixin,
                        test_servers.ServerMovingTests):
    pass


class ServerGroupTests(manager.CachingSchedulerMixin,
                       test_server_group.ServerGroupTestV215):
    pass


class MultiCellSchedulerTests(manager.CachingSchedulerMixin,
                              test_scheduler.MultiCellSchedulerTestCase):
    pass


SELECTED = {
    ServerMovingTests: [
        'test_resize_confirm', 'test_resize_revert',
        'test_resize_not_enough_resource', 'test_live_migrate',
        'test_live_migrate_force',
        'test_evacuate_host_specified_but_not_forced',
        'test_shelve_offload_unshelve_diff_host',
        # Forces a service down and migrates at once.
        'test_migrate_no_valid_host'],
    ServerGroupTests: [
        'test_boot_servers_with_anti_affinity',
        'test_boot_server_with_anti_affinity_no_valid_host',
        'test_migrate_with_anti_affinity_confirm_updates_scheduler',
        'test_boot_servers_with_soft_anti_affinity',
        # Disable and enable services, then boot at once.
        'test_failed_count_with_affinity_violation',
        'test_failed_count_with_anti_affinity_violation'],
    MultiCellSchedulerTests: [
        'test_migrate_between_cells', 'test_migrate_within_cell'],
}


def load_tests(loader, standard_tests, pattern):
    return unittest.TestSuite(cls(name) for cls, names in SELECTED.items()
                              for name in names)
