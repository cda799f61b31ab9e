"""Test fixtures that feed real compute-monitor metrics."""

import fixtures


class CPULoadFixture(fixtures.Fixture):
    """Drive each fake compute's measured CPU through the real monitor.

    The fake virt driver returns constant CPU counters, so Nova's
    ``cpu.virt_driver`` monitor divides by zero after the first sample and
    the host's metrics vanish.  This fixture replaces the driver's counters
    with monotonic ones whose busy share equals the load set per host, so
    ``cpu.percent`` flows compute -> ComputeNode.metrics -> HostState as in
    production.  Call ``test._run_periodics()`` to publish a new sample.

    Use it before the computes start, with
    ``self.flags(compute_monitors=['cpu.virt_driver'])``.
    """

    #: Counter units per sample; large enough that percent maths is exact.
    STEP = 10000

    def __init__(self, default_percent=5.0):
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
