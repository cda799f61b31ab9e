"""Fixtures that put DRS into Nova's functional harness.

Each one stands alone, so a test base class other than
:class:`~nova_drs_scheduler.testing.base.DRSTestCase` can use them.
"""

import json
import os
import sys

import fixtures
from oslo_config import cfg

from nova_drs_scheduler.conf import scheduler as scheduler_conf


def api_paste_config() -> str:
    """Nova's api-paste.ini as a pip-installed Nova puts it.

    The harness's default path only exists in a Nova source tree; without
    ``[wsgi] api_paste_config`` pointing here every test fails with
    ``ConfigNotFound``.
    """
    return os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')


class CPULoadFixture(fixtures.Fixture):
    """Feed each fake compute's measured CPU through the real monitor.

    The fake virt driver returns constant CPU counters, so Nova's
    ``cpu.virt_driver`` monitor divides by zero after the first sample and
    the host's metrics vanish.  This fixture replaces the driver's counters
    with monotonic ones whose busy share equals the load set per host, so
    ``cpu.percent`` flows compute -> ComputeNode.metrics -> HostState and
    the ``nova`` metric source as in production.  Each call of the test's
    ``_run_periodics()`` publishes a new sample.

    Use it before the computes start, with
    ``[DEFAULT] compute_monitors = cpu.virt_driver``.
    """

    #: Counter units per sample; large enough that percent maths is exact.
    STEP = 10000

    def __init__(self, default_percent: float = 5.0):
        super().__init__()
        self.default_percent = default_percent
        self._load = {}
        self._counters = {}

    def _setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.fake.FakeDriver.get_host_cpu_stats', self._stats))

    def set(self, host: str, percent: float) -> None:
        self._load[host] = float(percent)

    def get(self, host: str) -> float:
        return self._load.get(host, self.default_percent)

    def _stats(self, driver):
        busy_share = self.get(driver._host) / 100.0
        counters = self._counters.setdefault(
            id(driver), {'user': 0.0, 'kernel': 0, 'idle': 0.0,
                         'iowait': 0})
        # The epsilon keeps int(perc * 100) in the monitor from rounding
        # 29% down to 28 through float error.
        busy = busy_share * self.STEP + 0.01
        counters['user'] += busy
        counters['idle'] += self.STEP - busy
        return dict(counters, frequency=800)


class StaticMetricsFixture(fixtures.Fixture):
    """The ``static`` metric source's file, fed from the test.

    Points ``[drs] static_metrics_file`` at a temporary file; :meth:`write`
    replaces its content atomically, so each period reads exactly the loads
    the test chose.  Select the source with ``[drs] metrics_source =
    static`` (left to the test: it may run the ``nova`` source instead).
    """

    def __init__(self, conf: cfg.ConfigOpts):
        super().__init__()
        self.conf = conf
        self.path = None

    def _setUp(self):
        self.path = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'metrics.json')
        self.write({})
        self.conf.set_override('static_metrics_file', self.path, 'drs')
        self.addCleanup(self.conf.clear_override, 'static_metrics_file',
                        'drs')

    def write(self, hosts: dict, instances: dict | None = None,
              waiting: dict | None = None,
              instance_waits: dict | None = None) -> None:
        """``hosts``: {host: cpu percent}; ``instances``: {uuid: cores};
        ``waiting``: {host: cores waiting for a CPU} of the hosts whose
        contention is measured; ``instance_waits``: {uuid: cores}."""
        waiting = waiting or {}
        data = {'hosts': {h: {'cpu_percent': cpu} | (
                    {'cpu_waiting': waiting[h]} if h in waiting else {})
                          for h, cpu in hosts.items()},
                'instances': instances or {},
                'instance_waits': instance_waits or {}}
        tmp = self.path + '.tmp'
        with open(tmp, 'w') as handle:
            json.dump(data, handle)
        os.replace(tmp, self.path)


class DRSDatabaseFixture(fixtures.Fixture):
    """A DRS database of the test's own: ``[drs_database] connection``
    points at an SQLite file in a temporary directory, which our scheduler
    manager creates and migrates at start."""

    def __init__(self, conf: cfg.ConfigOpts):
        super().__init__()
        self.conf = conf
        self.connection = None

    def _setUp(self):
        self.connection = 'sqlite:///' + os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'drs.sqlite')
        self.conf.set_override('connection', self.connection,
                               'drs_database')
        self.addCleanup(self.conf.clear_override, 'connection',
                        'drs_database')


class LegacyOverridesFixture(fixtures.Fixture):
    """Undo the overrides the service's legacy-name translation sets.

    Starting the scheduler from config (``service.manager_path``) applies
    legacy ``[DEFAULT] scheduler_*`` names with ``set_override``, which
    Nova's config fixture does not reset: without this, they leak into the
    next test of the process.
    """

    def __init__(self, conf: cfg.ConfigOpts):
        super().__init__()
        self.conf = conf

    def _setUp(self):
        targets = set(scheduler_conf.LEGACY.values())
        # A retired driver name also sets the host manager.
        targets.add(('scheduler', 'host_manager'))
        for group, name in sorted(targets):
            self.addCleanup(self.conf.clear_override, name, group)
