"""Options of the CachingHostManager (``[drs_host_cache]``)."""

from oslo_config import cfg

host_cache_group = cfg.OptGroup(
    'drs_host_cache',
    title='Caching host manager',
    help='Options of nova_drs_scheduler.host_manager.CachingHostManager, '
         'which keeps compute node, service and instance-location rows in '
         'memory and refreshes them incrementally instead of reading every '
         'row on every scheduling request.')

OPTS = [
    cfg.FloatOpt(
        'max_staleness',
        default=5.0,
        min=0.0,
        max=300.0,
        help='Maximum age, in seconds, of the cached rows a scheduling '
             'request may use. A request that finds the cache of a cell '
             'older than this first fetches the rows changed since the last '
             'refresh. This bounds how long a new compute node, a disabled, '
             'forced-down or deleted service, a deleted compute node or a '
             'new resource report can go unseen. Placement still checks '
             'capacity on every claim, so staleness can cost a retry, never '
             'an over-commit. 0 refreshes on every request.'),
    cfg.IntOpt(
        'timestamp_margin',
        default=10,
        min=0,
        max=3600,
        help='Seconds subtracted from the time of the previous refresh when '
             'asking the database for changed rows. Rows are stamped with '
             'the clock of the service that wrote them and become visible '
             'only when their transaction commits, and MySQL stores whole '
             'seconds, so the margin must cover clock skew between the '
             'controllers plus the longest write transaction. Rows inside '
             'the margin are read again, which is harmless.'),
    cfg.IntOpt(
        'full_refresh_interval',
        default=600,
        min=0,
        help='Seconds between full reloads of a cell\'s cached rows. A full '
             'reload heals anything incremental refreshes cannot see, such '
             'as a clock skew larger than ``timestamp_margin`` or rows '
             'removed from the database by hand. 0 disables full reloads '
             'after the first one.'),
    cfg.FloatOpt(
        'background_refresh_interval',
        min=0.0,
        max=300.0,
        help='Seconds between refreshes of the cached rows by a thread of '
             'the scheduler service itself (a green thread under eventlet), '
             'so that scheduling requests find the rows fresh and none '
             'waits for the database. Unset (the default): half of '
             '``max_staleness``, 2.5 s with its default. A value set here '
             'must be less than ``max_staleness``, with room for a refresh '
             'to finish (about 0.1 s at 1000 compute nodes, 1 s at 10000): '
             'a request that finds rows older than ``max_staleness``, '
             'because a background refresh is late or failed, still '
             'refreshes them itself. 0 disables the background refresh: '
             'the first request that finds stale rows refreshes them. Not '
             'used when ``max_staleness`` is 0, since every request then '
             'refreshes.'),
    cfg.FloatOpt(
        'background_refresh_max_share',
        default=0.5,
        min=0.05,
        max=1.0,
        help='Largest share of the scheduler\'s time the background '
             'refresh may take. After a pass that took t seconds (wall '
             'clock), the next pass waits at least t * (1 - share) / share '
             'seconds, even when ``background_refresh_interval`` is '
             'shorter: with 0.5, as long as the pass; with 0.25, three '
             'times the pass. At a scale where a pass takes longer than '
             'the interval allows (thousands of compute nodes), passes '
             'then no longer run back to back and take the interpreter '
             'from scheduling requests at most this share of the time. '
             'Rows may then grow older than ``max_staleness`` between '
             'passes; a request that finds them so still refreshes them '
             'first, so the bound holds: lowering the share pays off only '
             'with a ``max_staleness`` above about (1 / share) times a '
             'pass. 1 lets passes run back to back.'),
    cfg.FloatOpt(
        'gc_collect_interval',
        default=600.0,
        min=0.0,
        help='Seconds between full garbage collections of the whole '
             'scheduler process while objects are frozen. After each '
             'background refresh, and in each rebalance period once its '
             'snapshot is built, every object then alive (Nova\'s code, '
             'the cached rows, what the period read) is frozen (Python\'s '
             '``gc.freeze``), so that the automatic full collections, '
             'which otherwise walk every object of the process and hold it '
             'for hundreds of milliseconds at 1000 compute nodes, walk '
             'only what was created since. Frozen objects are still freed '
             'when nothing holds them, but frozen reference cycles are '
             'not: once per interval the next freeze unfreezes everything '
             'and collects it all first, which bounds the memory such '
             'cycles can hold. 0 disables freezing: Python collects as it '
             'does by default.'),
]


def refresh_interval(group) -> float:
    """Seconds between background refreshes, 0 for none.

    Unset, it follows ``max_staleness`` so that an operator who lowers the
    bound never has to touch this option too.
    """
    if group.max_staleness == 0:
        return 0.0
    if group.background_refresh_interval is None:
        return group.max_staleness / 2
    return group.background_refresh_interval


def wait_after(group, took: float) -> float:
    """Seconds the background refresh must wait after a pass that took
    ``took`` seconds, so that it takes at most
    ``background_refresh_max_share`` of the time."""
    share = group.background_refresh_max_share
    return took * (1.0 - share) / share


def check(conf: cfg.ConfigOpts) -> str | None:
    """Why the options cannot work together, or None."""
    group = conf.drs_host_cache
    interval = group.background_refresh_interval
    if interval is not None and 0 < group.max_staleness <= interval:
        return ('Invalid value for option [drs_host_cache] '
                f'background_refresh_interval: {interval:g} must be less '
                f'than max_staleness ({group.max_staleness:g}), or 0 to '
                'disable the background refresh')
    return None


def list_opts():
    return {host_cache_group: OPTS}
