"""A rebalancer stand-in for the failover tests: run as a separate process.

Usage: worker.py BACKEND_URL LOG_FILE NAME INTERVAL

Every INTERVAL seconds it asks ToozLeader whether it may act; when it may,
it "runs a period" (holds it for a fifth of the interval) and appends
``{"member", "start", "end"}`` to LOG_FILE.  Run as a script, not through
the tests package, so Nova's monkey patching stays out of it.
"""

import json
import os
import sys
import time

from nova_drs_scheduler.rebalance import coordination


def main():
    url, log_path, name, interval = sys.argv[1:5]
    interval = float(interval)
    leader = coordination.ToozLeader(url, 'drs-failover-test',
                                     settle=interval, member_id=name)
    while True:
        is_leader, _why = leader.check()
        if not is_leader:
            time.sleep(interval / 10)
            continue
        start = time.time()
        time.sleep(interval / 5)
        line = json.dumps({'member': name, 'start': start,
                           'end': time.time()})
        with open(log_path, 'a') as log:
            log.write(line + '\n')
            log.flush()
            os.fsync(log.fileno())
        time.sleep(interval - interval / 5)


if __name__ == '__main__':
    main()
