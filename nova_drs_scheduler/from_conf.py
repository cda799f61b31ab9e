"""The planner's and the metrics' objects, configured from ``[drs]``.

The bridge between the options (:mod:`nova_drs_scheduler.conf.rebalance`,
which imports nothing of ours but leaves) and the pure decisions
(:mod:`nova_drs_scheduler.planning`, which imports no options): above
both, so that the live period and the simulator build them the same way,
with the options ``[drs] aggressiveness`` sets read through
:func:`.conf.rebalance.value`.
"""

import functools

from oslo_config import cfg

from nova_drs_scheduler.conf import rebalance as drs_opts
from nova_drs_scheduler.planning import metrics
from nova_drs_scheduler.planning import model

#: Nova's default ``[DEFAULT] max_concurrent_live_migrations``, for a
#: process without Nova's options (the simulator).
NOVA_MAX_CONCURRENT_LIVE_MIGRATIONS = 1


def planner_config(conf) -> model.PlannerConfig:
    """The planner's view of ``[drs]``."""
    drs = conf.drs
    level = functools.partial(drs_opts.value, conf)
    return model.PlannerConfig(
        policy=drs.policy, mode=drs.mode,
        unaggregated_hosts=drs.unaggregated_hosts,
        cpu_threshold=drs.cpu_threshold, ram_threshold=drs.ram_threshold,
        stabilization=level('stabilization'), margin=drs.margin,
        min_improvement=level('min_improvement'),
        cure_below_min_improvement=drs.cure_below_min_improvement,
        max_migrations_per_period=level('max_migrations_per_period'),
        max_concurrent_migrations_per_host=(
            drs.max_concurrent_migrations_per_host),
        max_concurrent_migrations=drs.max_concurrent_migrations,
        max_concurrent_migrations_per_violated_host=(
            drs.max_concurrent_migrations_per_violated_host),
        destination_deviations=drs.destination_deviations,
        level_gap=level('level_gap'), level_band=drs.level_band,
        level_rise_rate=drs.level_rise_rate,
        level_steady_share=drs.level_steady_share,
        level_after_wake=drs.level_after_wake,
        drain_max_concurrent_migrations_per_host=drain_concurrency(conf),
        benefit_horizon=level('benefit_horizon'),
        load_halflife=drs.expected_load_halflife,
        migration_bandwidth=drs.migration_bandwidth,
        migration_dirty_rate=drs.migration_dirty_rate)


def drain_concurrency(conf) -> int:
    """Migrations at once off a draining host: ``[drs]
    drain_max_concurrent_migrations_per_host``, or, unset, Nova's own
    ``max_concurrent_live_migrations`` (0: the cloud's total)."""
    value = conf.drs.drain_max_concurrent_migrations_per_host
    if value is None:
        try:
            value = (conf.max_concurrent_live_migrations
                     or conf.drs.max_concurrent_migrations)
        except cfg.NoSuchOptError:  # The simulator: Nova's default.
            value = NOVA_MAX_CONCURRENT_LIVE_MIGRATIONS
    return value


def metrics_windows(conf) -> metrics.MetricsWindows:
    """Fresh per-host windows and counters configured from ``[drs]``."""
    drs = conf.drs
    return metrics.MetricsWindows(
        window=drs.window,
        stabilization=drs_opts.value(conf, 'stabilization'),
        max_age=drs.metrics_max_age, cpu_threshold=drs.cpu_threshold,
        ram_threshold=drs.ram_threshold,
        halflife=drs.expected_load_halflife,
        rise_points=drs.level_rise_points,
        rise_halflife=drs.level_rise_halflife)


def instance_cooldown(conf) -> int:
    """``[drs] instance_cooldown`` in force (set, or by the level)."""
    return drs_opts.value(conf, 'instance_cooldown')


def load_trends(conf) -> metrics.LoadTrends:
    """Fresh instance load trends on the hosts' half-life."""
    return metrics.LoadTrends(conf.drs.expected_load_halflife)
