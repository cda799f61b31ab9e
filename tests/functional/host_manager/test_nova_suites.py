"""Nova's server-moving functional tests over our manager.

Nova's scheduling suites (server groups, aggregates, availability zones,
multi-cell scheduling, the regressions) run whole with our scheduler in
``tests/nova_functional`` (``tox -e nova-functional``); these are the
moves (resize, live migration, evacuate, unshelve) those suites leave
out. Each reruns Nova's test unchanged except for the scheduler manager,
ours, with its default options (``max_staleness`` 5 s). ``load_tests``
keeps the selection small enough for the functional run to stay short on
two cores.
"""

import unittest

from nova.tests.functional import test_servers

from tests.functional.host_manager import manager


class ServerMovingTests(manager.CachingSchedulerMixin,
                        test_servers.ServerMovingTests):
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
}


def load_tests(loader, standard_tests, pattern):
    return unittest.TestSuite(cls(name) for cls, names in SELECTED.items()
                              for name in names)
