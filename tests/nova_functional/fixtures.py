"""Put our scheduler in place of Nova's for Nova's own functional tests.

Nova's ``TestCase.setUp`` gets one fixture more (``install``), applied
once its config fixture is up and before the test's own class starts any
service: the ``nova-scheduler`` binary then runs ``DRSSchedulerManager``
(whose host manager is the ``CachingHostManager``) instead of Nova's
``SchedulerManager``, with a DRS database of the test's own and every
option at its default (``[drs_host_cache] max_staleness`` 5 s included:
each request reads the services' disabled and forced-down flags, so a
service disabled or enabled through the API is seen at once, as Nova's
own scheduler sees it).
"""

import os

import fixtures
from nova import service as nova_service
from nova import test as nova_test
from oslo_config import cfg

from nova_drs_scheduler.host_manager import manager as caching
from nova_drs_scheduler.testing import fixtures as drs_fixtures

CONF = cfg.CONF

#: ``DRS_NOVA_TESTS_SCHEDULER``: ``drs`` (the default) runs ours, ``stock``
#: Nova's own manager and host manager, for the comparison.
MODE_VARIABLE = 'DRS_NOVA_TESTS_SCHEDULER'
MODES = ('drs', 'stock')

DRS_MANAGER = 'nova_drs_scheduler.manager.DRSSchedulerManager'


def mode() -> str:
    value = os.environ.get(MODE_VARIABLE, 'drs')
    if value not in MODES:
        raise ValueError(f'{MODE_VARIABLE}={value!r}: one of {MODES}')
    return value


class SchedulerFixture(fixtures.Fixture):
    """One test's scheduler: ours (``drs``) or Nova's (``stock``)."""

    def __init__(self, scheduler: str):
        super().__init__()
        self.scheduler = scheduler

    def _setUp(self):
        # Either way: a pip-installed Nova keeps its api-paste.ini under
        # sys.prefix, not where Nova's harness looks in a source tree.
        CONF.set_override('api_paste_config',
                          drs_fixtures.api_paste_config(), 'wsgi')
        self.addCleanup(CONF.clear_override, 'api_paste_config', 'wsgi')
        if self.scheduler == 'stock':
            return
        self.useFixture(fixtures.MonkeyPatch(
            'nova.service.SERVICE_MANAGERS',
            dict(nova_service.SERVICE_MANAGERS,
                 **{'nova-scheduler': DRS_MANAGER})))
        self.useFixture(drs_fixtures.DRSDatabaseFixture(CONF))
        # Runs after the test's services have stopped (cleanups run last
        # in, first out, and they start after this fixture).
        self.addCleanup(self._check_no_refresher_left)

    @staticmethod
    def _check_no_refresher_left():
        left = caching.running_refreshers()
        for host_manager in left:
            host_manager.stop_refresher()
        if left:
            raise AssertionError('background refresh still running after '
                                 'the services stopped')


def install(scheduler: str) -> None:
    """Make every Nova test case of this process use ``scheduler``."""
    set_up = nova_test.TestCase.setUp
    if getattr(set_up, 'drs_scheduler', None) is not None:
        return

    def setUp(self):  # noqa: N802 (unittest's name)
        set_up(self)
        self.useFixture(SchedulerFixture(scheduler))

    setUp.drs_scheduler = scheduler
    nova_test.TestCase.setUp = setUp
