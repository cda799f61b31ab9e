#!/usr/bin/env python3
"""Where a rolling maintenance's GB go: every migration with its cause.

Runs rows of ``bench_maintenance.py``'s rolling schedule on one trace and
seed, logs each migration the simulator starts (a drain's: off the host in
maintenance; any other: balancing's) and prints, per row, the GB moved, by
drains, the first host's drain (its instances move again whatever the
order: no host is back yet), the drain moves onto a host still to be
drained after the first host's (they move again when its turn comes), by
balancing, and the instances moved more than once.  Needs python-watcher
for Watcher's rows: run it in ``tox -e bench-maintenance``'s environment.
"""

import argparse
import json
import sys

import bench_maintenance as bench

from nova_drs_scheduler.simulate import engine

#: One dict per migration started: vm, mb, drain, and dest_todo (its
#: destination still to be drained) and source (the host drained).
LOG = []


def _logging(start):
    def logged(self, period, name, destination, at, promise=None):
        tracker = self.maintenance
        current = tracker.current.host if tracker.current else None
        migration = start(self, period, name, destination, at, promise)
        if migration is not None:
            drained = {d.host for d in tracker.drains}
            LOG.append({'vm': name, 'mb': migration.memory_mb,
                        'drain': migration.source == current,
                        'source': migration.source,
                        'dest_todo': migration.destination not in drained})
        return migration
    return logged


def breakdown(trace: str, seed: int, row: str, args) -> dict:
    """One row's run and where its GB went."""
    LOG.clear()
    argv = tuple(['--trace', trace] + bench.schedule_argv('rolling', args)
                 + ['--seed', str(seed)])
    run = bench.one(trace, argv, seed, 'rolling', row)
    drains = [m for m in LOG if m['drain']]
    first = drains[0]['source'] if drains else None
    spill = [m for m in drains if m['source'] != first and m['dest_todo']]
    moves = {}
    for m in LOG:
        moves[m['vm']] = moves.get(m['vm'], 0) + 1

    def gb(found):
        return round(sum(m['mb'] for m in found) / 1024.0, 1)

    return {'trace': trace, 'seed': seed, 'row': row,
            'overloaded_host_periods': run['overloaded_host_periods'],
            'gb_moved': run['gb_moved'], 'drain_gb': gb(drains),
            'first_host_gb': gb(m for m in drains if m['source'] == first),
            'onto_hosts_to_drain': len(spill),
            'onto_hosts_to_drain_gb': gb(spill),
            'balancing_gb': gb(m for m in LOG if not m['drain']),
            'moved_more_than_once': sum(1 for n in moves.values() if n > 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trace', required=True)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--rows', default=f'{bench.OURS};{bench.DRAINS}',
                        help='Semicolon-separated rows of '
                             'bench_maintenance.py.')
    parser.add_argument('--rolling-start', type=float, default=3600.0)
    parser.add_argument('--work-time', type=float, default=1800.0)
    parser.add_argument('--deadline', type=float, default=3600.0)
    args = parser.parse_args(argv)
    engine._Run.start = _logging(engine._Run.start)
    for row in args.rows.split(';'):
        print(json.dumps(breakdown(args.trace, args.seed, row, args)),
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
