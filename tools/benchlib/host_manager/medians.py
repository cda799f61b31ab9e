"""``--measure medians``: stock's scheduler against ours, side by side.

Host-state retrieval, filtering and weighing, and a whole
``select_destinations`` (with and without the time inside placement),
medians in ms; the request that pays an incremental refresh; and stock's
host states when computes have not pushed instance info.
"""

import collections
import time

from nova.scheduler import host_manager as nova_host_manager

from benchlib.clocks import elapsed
from benchlib.clocks import median_ms
from benchlib.clocks import placement_clock
from benchlib.cloud import request_spec
from benchlib.row_writer import RowWriter
from benchlib.scheduling import filter_and_weigh
from nova_drs_scheduler import conf as drs_conf

CONF = drs_conf.CONF
REPEATS = {100: 21, 1000: 11, 5000: 5, 10000: 3}
#: Instance info not pushed by computes costs stock one query per host;
#: measured only where it stays affordable.
UNSYNCED_MAX_NODES = 1000


def measure(ctxt, schedulers, nodes, placement, repeats):
    """``{name: {measure: median ms}}`` for each scheduler.

    Samples of the schedulers alternate, so that load from other processes
    on the machine weighs on all of them alike.
    """
    uuids = list(nodes.values())
    spec = request_spec(ctxt)
    samples = {name: collections.defaultdict(list) for name in schedulers}

    def states(scheduler):
        return list(scheduler.host_manager.get_host_states_by_uuids(
            ctxt, uuids, spec))

    # Warm up: loads our cache, imports, lazy filter objects.
    hosts = {name: states(s) for name, s in schedulers.items()}
    for _ in range(repeats):
        for name, scheduler in schedulers.items():
            samples[name]['states'].append(elapsed(states, scheduler))
            samples[name]['filter_weigh'].append(elapsed(
                filter_and_weigh, scheduler.host_manager, hosts[name], spec))

    clock = placement_clock()
    with clock.installed():
        # The first round warms the placement client up; it is dropped.
        for round_ in range(repeats + 1):
            for name, scheduler in schedulers.items():
                spec = request_spec(ctxt)
                clock.clear()
                total = elapsed(
                    scheduler.select_destinations, ctxt, spec_obj=spec,
                    instance_uuids=[spec.instance_uuid], return_objects=True,
                    return_alternates=True)
                placement.delete(f'/allocations/{spec.instance_uuid}')
                if round_:
                    samples[name]['select'].append(total)
                    samples[name]['select_own'].append(
                        total - clock.spent['placement'])
    return {name: {key: median_ms(values) for key, values in result.items()}
            for name, result in samples.items()}


def measure_refresh(ctxt, manager, nodes, cell_url, repeats):
    """Median (ms) of the request that pays an incremental refresh, and the
    number of rows changed before each.

    Before each sample, the rows a real cloud changes in ``max_staleness``
    seconds are stamped (``RowWriter``).
    """
    staleness = CONF.drs_host_cache.max_staleness
    uuids = list(nodes.values())
    spec = request_spec(ctxt)
    writer = RowWriter(cell_url, len(nodes))
    samples = []
    changed = 0
    offset = 0.0
    for _ in range(repeats):
        changed = writer.advance(staleness)
        offset += staleness + 1
        manager.rows.clock = lambda offset=offset: time.monotonic() + offset
        samples.append(elapsed(lambda: list(
            manager.get_host_states_by_uuids(ctxt, uuids, spec))))
    writer.close()
    return median_ms(samples), changed


def measure_unsynced(ctxt, nodes, repeats):
    """Stock host states when computes have not pushed instance info."""
    manager = nova_host_manager.HostManager()
    uuids = list(nodes.values())
    spec = request_spec(ctxt)
    return median_ms([elapsed(lambda: list(manager.get_host_states_by_uuids(
        ctxt, uuids, spec))) for _ in range(repeats)])


def report_rows(results):
    rows = []
    for r in results:
        stock, ours = r['stock'], r['ours']
        for label, key in (('host states', 'states'),
                           ('filter + weigh', 'filter_weigh'),
                           ('select_destinations', 'select'),
                           ('select_destinations w/o placement',
                            'select_own')):
            rows.append([r['size'], label, stock[key], ours[key],
                         stock[key] / ours[key]])
        rows.append([r['size'], 'host states, request that refreshes '
                     f'({r["changed"]} rows changed)', None,
                     ours['refresh'], None])
        if r['unsynced'] is not None:
            rows.append([r['size'], 'host states, instance info not synced',
                         r['unsynced'], ours['states'],
                         r['unsynced'] / ours['states']])
    return rows


def growth_rows(results):
    rows = []
    for prev, cur in zip(results, results[1:], strict=False):
        factor = cur['size'] / prev['size']
        for label, key in (('host states', 'states'),
                           ('select_destinations w/o placement',
                            'select_own')):
            rows.append([f'{prev["size"]} -> {cur["size"]} (x{factor:g})',
                         label, cur['stock'][key] / prev['stock'][key],
                         cur['ours'][key] / prev['ours'][key]])
    return rows
