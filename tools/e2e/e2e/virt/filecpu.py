"""A fake virt driver whose host CPU load is set by the test, via a file.

Nova's ``FakeDriver`` returns constant CPU counters, so the
``cpu.virt_driver`` monitor divides by zero after its first sample and the
host's ``cpu.percent`` disappears.  This driver returns counters that
advance on every call with a busy share equal to the percent written in
``<[DEFAULT] state_path>/cpu_percent`` (5 when the file is missing), so the
real monitor -> resource tracker -> ComputeNode.metrics -> scheduler path
carries the load the test chose.

``<state_path>/live_migration_seconds``, when present, makes each live
migration take that long before it completes, so a test can act while
one is running.
"""

import os
import time

import nova.conf
from nova.virt import fake

CONF = nova.conf.CONF

#: Counter units per sample; the epsilon keeps int(perc * 100) in the
#: monitor from rounding e.g. 29% down to 28 through float error.
STEP = 10000


def _read_number(name: str, default: float) -> float:
    try:
        with open(os.path.join(CONF.state_path, name)) as handle:
            return float(handle.read().strip())
    except (OSError, ValueError):
        return default


class FileCPUDriver(fake.MediumFakeDriver):

    def __init__(self, virtapi, read_only=False):
        super().__init__(virtapi, read_only)
        self._counters = {'user': 0.0, 'kernel': 0, 'idle': 0.0,
                          'iowait': 0}

    def get_host_cpu_stats(self):
        busy = _read_number('cpu_percent', 5.0) / 100.0 * STEP + 0.01
        self._counters['user'] += busy
        self._counters['idle'] += STEP - busy
        return dict(self._counters, frequency=800)

    def live_migration(self, context, instance, dest, post_method,
                       recover_method, block_migration=False,
                       migrate_data=None):
        time.sleep(_read_number('live_migration_seconds', 0.0))
        super().live_migration(context, instance, dest, post_method,
                               recover_method, block_migration,
                               migrate_data)
