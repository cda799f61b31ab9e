"""Watcher's rows of the rebalancing benchmark: its two strategies and grids.

The single-row grids let a run add rows to earlier runs (``--reuse``);
their labels are those of the same rows in ``full``.
"""

import dataclasses

from nova_drs_scheduler.simulate import watcher_adapter

#: Seconds per sample of the traces (the simulator's period).
GRANULARITY = 60
WB, WS = watcher_adapter.WATCHER_STRATEGIES
#: Watcher's own grid: workload_balance thresholds (percent) and
#: workload_stabilization CPU thresholds (normalised std-dev) and retry
#: counts.  Defaults are in it; 80 is our ``cpu_threshold``.
WB_THRESHOLDS = (70.0, 80.0)
WS_THRESHOLDS = (0.05, 0.1)
WS_RETRIES = (1, 5)


@dataclasses.dataclass(frozen=True)
class Variant:
    """One Watcher row: a strategy and the parameters it runs with."""

    label: str
    kind: str
    parameters: tuple
    default: bool = False
    #: Audits run while a plan runs (an audit with ``force`` set); off,
    #: as by Watcher's default, they are skipped meanwhile.
    force: bool = True


def _wb(period: int, threshold: float, default: bool = False) -> Variant:
    return Variant(f'WB period {period} s, threshold {threshold:g}'
                   + (' (default)' if default else ''), WB,
                   (('period', period), ('granularity', min(period, 300)),
                    ('threshold', threshold)), default)


def _ws(periods: tuple, threshold: float, retries: int,
        default: bool = False, force: bool = True) -> Variant:
    instance, node = periods
    when = f'{instance} s' if instance == node else f'{instance}/{node} s'
    return Variant(f'WS period {when}, threshold {threshold:g}, retry '
                   f'{retries}' + (' (default)' if default else '')
                   + ('' if force else ', no audit while a plan runs'), WS,
                   (('periods', {'instance': instance, 'compute_node': node,
                                 'node': 0}),
                    ('granularity', min(instance, 300)),
                    ('thresholds', {'instance_cpu_usage': threshold,
                                    'instance_ram_usage': 0.1}),
                    ('retry_count', retries)), default, force)


GRIDS = ('defaults', 'wb', 'wb+70', 'wb60', 'wb60-70', 'wb300', 'wb300-70',
         'ws', 'ws60-05', 'ws60-10', 'ws-unforced', 'full')


def watcher_variants(grid: str, threshold: float) -> list:
    """Watcher's rows.  ``defaults``: each strategy at its default periods
    and at 60 s (WB's threshold at ours, ``threshold``: at its own 25 % it
    plans nothing on a 60 % cluster).  ``wb``: workload_balance only, at
    both periods (on PlanetLab workload_stabilization, and WB at other
    thresholds, are far behind it; see doc/benchmarks-balancing.md); ``wb+70``:
    those and WB at 60 s, threshold 70 (the best row of most trace-seeds
    where WB at 60 s, threshold 80 is not).  ``wb60``,
    ``wb60-70``, ``wb300``, ``wb300-70``: one WB row alone, at 60 s at
    ``threshold`` or at 70, or at its default 300 s at ``threshold`` or
    at 70; ``ws``: workload_stabilization's rows alone (its defaults, and
    its grid at 60 s); ``ws60-05``: its row at 60 s, CPU threshold 0.05,
    retry count 1, audits forced (the staggered peaks' best single
    setting); ``ws60-10``: its row at 60 s, CPU threshold 0.1,
    retry count 1, the one that leaves the least unserved demand on the
    PlanetLab days; ``ws-unforced``: its rows at 60 s with retry
    count 1 as Watcher runs audits by default, none while a plan runs
    (every other row's audits are forced: at 60 s with many moves a
    period, forced audits pile plans up and can run away).  These
    single-strategy grids let a run add rows to earlier ones
    (``--reuse``) without repeating them.  ``full``: all of them, WB's
    other thresholds at both periods and workload_stabilization's grid at
    60 s."""
    wb300, wb60 = _wb(300, threshold, True), _wb(GRANULARITY, threshold)
    ws = [_ws((720, 600), 0.1, 1, True),
          _ws((GRANULARITY, GRANULARITY), 0.1, 1)]
    ws_grid = [_ws((GRANULARITY, GRANULARITY), t, r)
               for t in WS_THRESHOLDS for r in WS_RETRIES
               if (t, r) != (0.1, 1)]
    others = [_wb(GRANULARITY, t) for t in WB_THRESHOLDS if t != threshold]
    others300 = [_wb(300, t) for t in WB_THRESHOLDS if t != threshold]
    unforced = [_ws((GRANULARITY, GRANULARITY), t, 1, force=False)
                for t in WS_THRESHOLDS]
    grids = {
        'defaults': [wb300, wb60] + ws,
        'wb': [wb300, wb60],
        'wb+70': [wb300, wb60, _wb(GRANULARITY, 70.0)],
        'wb60': [wb60],
        'wb60-70': [_wb(GRANULARITY, 70.0)],
        'wb300': [wb300],
        'wb300-70': [_wb(300, 70.0)],
        'ws': ws + ws_grid + unforced,
        'ws60-05': [_ws((GRANULARITY, GRANULARITY), 0.05, 1)],
        'ws60-10': [ws[1]],
        'ws-unforced': unforced,
        'full': [wb300, wb60] + ws + others + others300 + ws_grid + unforced,
    }
    return grids[grid]


#: The Watcher row the headline verdict holds ours to on every trace
#: (``single_setting_checks``): workload_balance at 60 s, threshold 80.
WB60 = _wb(GRANULARITY, 80.0).label
