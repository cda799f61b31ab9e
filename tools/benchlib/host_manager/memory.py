"""``--measure memory``: the process's size and frozen objects over a run.
"""

import gc
import os
import time

from benchlib.scheduling import timed_select
from nova_drs_scheduler import conf as drs_conf

CONF = drs_conf.CONF


def resident_mb():
    """The process's resident memory now (MiB), from /proc."""
    with open('/proc/self/statm', encoding='ascii') as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf('SC_PAGE_SIZE') / 2**20


def measure_memory(ctxt, scheduler, placement, writer, requests):
    """Rows of (requests done, seconds, resident MiB, frozen objects,
    tracked objects) every tenth of the run: with the background refresh
    freezing objects every 0.2 s, whether memory grows."""
    CONF.set_override('background_refresh_interval', 0.2,
                      group='drs_host_cache')
    scheduler.host_manager.start_refresher()
    started = time.monotonic()
    rows = []
    step = max(1, requests // 10)
    for done in range(requests + 1):
        if done % step == 0:
            rows.append([done, time.monotonic() - started, resident_mb(),
                         gc.get_freeze_count(), len(gc.get_objects())])
        if done < requests:
            writer.catch_up()
            timed_select(ctxt, scheduler, placement)
    return rows
