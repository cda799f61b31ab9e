"""Options of the rebalancer's judgement and planning (``[drs]``).

The names are the operator contract.  Defaults follow what operators of
VMware DRS (level 3), oVirt (75%, 2 minutes) and Proxmox CRS (hold 3
rounds) expect: act only on sustained overload, a few moves at a time.
"""

from importlib import metadata

from oslo_config import cfg

from nova_drs_scheduler import plugin_namespaces
from nova_drs_scheduler.conf import utilization

# ``policy`` and ``metrics_source`` name an entry of a stevedore namespace
# (plugin_namespaces). Plug-ins add names, so they are checked against
# what is installed at start (:func:`check`), not listed as choices.

#: ``[drs] aggressiveness``: the values each level, 1 to 5, gives the
#: options that trade overload against migrations, as measured by the
#: rebalancing benchmark (doc/benchmarks-balancing.md). Level 3 is each
#: option's own default. An option set explicitly wins (:func:`value`).
LEVELS = {
    # Periods over the threshold before a host is relieved.
    'stabilization': (3, 2, 1, 1, 1),
    # Points a move must lower the pair's worst load by.
    'min_improvement': (15.0, 10.0, 5.0, 3.0, 1.0),
    # Migrations planned per period.
    'max_migrations_per_period': (1, 1, 2, 3, 4),
    # Seconds before a moved instance may move again.
    'instance_cooldown': (14400, 7200, 3600, 1800, 1800),
    # Seconds of relief a move must pay for (the cost-benefit rule).
    'benefit_horizon': (14400, 7200, 3600, 1800, 900),
    # Leveling in bursty pools: off at 1 and 2.
    'level_gap': (0.0, 0.0, 10.0, 10.0, 5.0),
}
LEVEL_NAMES = ('conservative', 'moderately conservative', 'balanced',
               'moderately aggressive', 'aggressive')
DEFAULT_AGGRESSIVENESS = 3

OPTS = [
    cfg.StrOpt(
        'automation',
        default='off',
        choices=[
            ('off', 'No rebalancing: no metrics are sampled and nothing is '
                    'planned. Filters and weighers work as usual.'),
            ('manual', 'Plan every period and log the plan (one JSON line) '
                       'and its reasons, but migrate nothing: recommend '
                       'only, as a dry run.'),
            ('automatic', 'Plan every period and live-migrate the planned '
                          'instances.'),
        ],
        help='Automation level of the rebalancer. Start with ``manual``, '
             'read the plans with ``nova-drs explain``, then switch to '
             '``automatic``.'),
    cfg.IntOpt(
        'aggressiveness',
        default=DEFAULT_AGGRESSIVENESS,
        min=1,
        max=len(LEVEL_NAMES),
        help='How readily the rebalancer migrates, like vSphere DRS\'s '
             'migration threshold: 1 (conservative) waits for sustained '
             'overload and migrates least; 5 (aggressive) acts at once, '
             'levels bursty pools harder and migrates most. The level '
             'sets the advanced options ' + ', '.join(
                 f'``{name}``' for name in LEVELS) + ' (their values per '
             'level: doc/options.md); an option set explicitly in the '
             'configuration wins over the level. 3 gives each of them '
             'its own default, so existing deployments are unchanged. '
             '``nova-drs status`` shows the level in force and the '
             'options that override it.'),
    cfg.StrOpt(
        'mode',
        default='global',
        choices=[
            ('global', 'Any host may take an instance from any other.'),
            ('aggregate', 'Moves stay inside the instance\'s host '
                          'aggregate (its DRS pool).'),
        ],
        help='Scope of rebalancing moves.'),
    cfg.StrOpt(
        'unaggregated_hosts',
        default='ignore',
        choices=[
            ('ignore', 'Hosts in no aggregate are neither judged nor '
                       'destinations.'),
            ('pool', 'Hosts in no aggregate form one shared pool of their '
                     'own and are rebalanced among themselves.'),
        ],
        help='In ``mode = aggregate``, what happens to hosts that belong '
             'to no aggregate. Ignored in ``global`` mode.'),
    cfg.FloatOpt(
        'cpu_threshold',
        default=80.0,
        help='A host whose CPU utilization, averaged over ``window`` '
             'samples and in percent of its physical CPUs, is above this '
             'is over its threshold. Aggregate metadata may override it '
             'per aggregate.',
        **utilization.PERCENT),
    cfg.FloatOpt(
        'ram_threshold',
        default=90.0,
        help='A host whose memory use, averaged over ``window`` samples '
             'and in percent of its physical memory, is above this is over '
             'its threshold (a host is over when CPU *or* RAM is). Set 100 '
             'to rebalance on CPU only.',
        **utilization.PERCENT),
    cfg.IntOpt(
        'window',
        default=1,
        min=1,
        help='Number of most recent samples averaged per host. The default '
             'judges each period on its newest sample: ``stabilization`` '
             'already demands that many consecutive periods over the '
             'threshold, so a spike never triggers a move, and averaging on '
             'top only delays relief (on the PlanetLab benchmark, window 3 '
             'left about two fifths more overloaded host-periods for about '
             'as many migrations; see doc/benchmarks-balancing.md). '
             'Raise it to 2 or 3 when '
             'samples are noisy (a host hovering around the threshold whose '
             'single samples dip under it keeps resetting its counter).'),
    cfg.IntOpt(
        'stabilization',
        advanced=True,
        default=1,
        min=1,
        help='Consecutive periods a host\'s average must stay over its '
             'threshold before it is violated and relieved; it is relieved '
             'again at every multiple of this count while it stays over, '
             'and one period under the threshold resets the count. The '
             'default 1 relieves a host in the period it goes over: on the '
             'PlanetLab benchmark every period of waiting left a host '
             'overloaded while Watcher at 60 s already acted, and cures '
             'that leave the pair level keep the migrations down (see '
             'doc/benchmarks-balancing.md). On 1-minute samples with '
             'short bursts '
             'that should not move anything, raise it to 2 or 3 (spikes '
             'shorter than that many periods then never move anything); '
             'the benchmark shows both.'),
    cfg.StrOpt(
        'policy',
        default='balanced',
        help='Rebalancing policy, by name in the '
             '``nova_drs_scheduler.policies`` namespace. Built in: '
             '``balanced`` (cheapest move that cures the host, never '
             'pushes a destination past its threshold minus ``margin``, '
             'CPU and RAM together) and ``seed`` (the original algorithm: '
             'least-loaded instance to the least-loaded host, kept as a '
             'baseline).'),
    cfg.FloatOpt(
        'margin',
        default=5.0,
        help='Percentage points below its own threshold that a destination '
             '(and, when possible, the relieved source) must stay at after '
             'a move, in CPU and RAM: the hysteresis of the ``balanced`` '
             'policy (``no_return_time`` is its no-ping-pong rail). 10 '
             'left hosts overloaded for want of a destination on the '
             'PlanetLab benchmark, at no gain in ping-pongs; raise it for '
             'burstier workloads. In a warm pool, where no destination '
             'keeps it, ``balanced`` grades it down to the room the '
             'pool\'s hosts have under their threshold minus margin on '
             'average (0 when they are past it), never for a host an '
             'instance of the source came from within '
             '``no_return_time``: a flat margin would leave a load that '
             'rose and stays overloaded for as long as the pool is warm.',
        **utilization.PERCENT),
    cfg.FloatOpt(
        'min_improvement',
        advanced=True,
        default=5.0,
        help='Minimum drop, in percentage points over threshold, of the '
             'worst load of the source and destination that makes a '
             'move worth a live migration (``balanced`` policy). Raise it '
             'to migrate less; 0 accepts any move that helps. See '
             '``cure_below_min_improvement`` for moves that cure the host.',
        **utilization.PERCENT),
    cfg.BoolOpt(
        'cure_below_min_improvement',
        default=True,
        help='Make a move that brings a violated host to its threshold or '
             'under even when it lowers the worst load of the pair by less '
             'than ``min_improvement`` (the destination must still stay '
             '``margin`` under its own threshold). A host a few points over '
             'is then cured by a small instance instead of staying '
             'overloaded until a larger one fits somewhere: on the '
             'benchmark this cut overloaded host-periods on PlanetLab '
             '20110306 by a quarter (doc/benchmarks-balancing.md). '
             'False applies ``min_improvement`` to every move.'),
    cfg.IntOpt(
        'max_migrations_per_period',
        advanced=True,
        default=2,
        min=1,
        help='Maximum number of migrations planned in one period.'),
    cfg.IntOpt(
        'max_concurrent_migrations_per_host',
        default=1,
        min=1,
        help='Maximum number of rebalancing migrations in flight per host, '
             'as source or destination, counting those planned this '
             'period.'),
    cfg.IntOpt(
        'max_concurrent_migrations_per_violated_host',
        default=2,
        min=0,
        help='Maximum number of rebalancing migrations in flight off a '
             'violated host, counting those planned this period: a second '
             'move is planned only while the host stays projected over its '
             'threshold after the first, and every destination keeps '
             '``max_concurrent_migrations_per_host``. A host one move cannot '
             'cure otherwise stays overloaded for another period. On the '
             'benchmark (six traces, seeds 1-3) the default 2 left as many '
             'overloaded host-periods in total as 1, for 3 % more '
             'migrations, and kept the worst host under doing nothing\'s on '
             'every seed (doc/benchmarks-balancing.md). Nova runs one '
             'host\'s live migrations one after the other by default '
             '(``[DEFAULT] max_concurrent_live_migrations``). A value not '
             'above ``max_concurrent_migrations_per_host`` (0, 1) applies '
             'that limit to violated hosts too. Approved recommendations keep '
             '``max_concurrent_migrations_per_host`` at both ends.'),
    cfg.IntOpt(
        'max_concurrent_migrations',
        default=4,
        min=1,
        help='Maximum number of rebalancing migrations in flight in the '
             'cloud (or the lease\'s scope), counting those planned this '
             'period.'),
    cfg.IntOpt(
        'drain_flow_interval',
        default=5,
        min=1,
        help='Seconds between the leader\'s checks, between rebalance '
             'periods, for drain moves that have ended. While a host '
             'drains (maintenance or standby), each check that finds a '
             'move ended plans the drains alone at once and starts their '
             'next moves, so a drain goes at the pace of its migrations '
             'and the link, not once per ``rebalance_interval``.'),
    cfg.IntOpt(
        'drain_max_concurrent_migrations_per_host',
        min=1,
        help='Maximum number of migrations in flight off a host that is '
             'draining (maintenance or standby), and into each of its '
             'destinations when that is more than '
             '``max_concurrent_migrations_per_host``. Unset (the default), '
             'it follows ``[DEFAULT] max_concurrent_live_migrations`` as '
             'read by the scheduler (Nova\'s default 1; 0, Nova\'s '
             'deprecated "unlimited", means ``max_concurrent_migrations``): '
             'Nova\'s compute queues any more than that per source anyway. '
             'Raise both together, on the computes and here. Drain moves '
             'count in ``max_concurrent_migrations`` but not in '
             '``max_migrations_per_period``, and leave a slot of '
             '``max_concurrent_migrations`` to each violated host, up to '
             '``max_migrations_per_period`` (at least one slot to drains): '
             'an overloaded host never waits for a drain to finish.'),
    cfg.IntOpt(
        'instance_cooldown',
        advanced=True,
        default=3600,
        min=0,
        help='Seconds after a rebalancing migration during which the same '
             'instance is not moved again, but off a starved host none of '
             'whose other instances may move (its tenants wait for CPU; '
             '``no_return_time`` still keeps it off the host it left; '
             'doc/balancing.md). 0 disables the cooldown.'),
    cfg.IntOpt(
        'no_return_time',
        default=21600,
        min=0,
        help='Seconds during which an instance is never moved back to a '
             'host it left (any live migration, ours or an operator\'s), '
             'whatever the loads say: the no-ping-pong rail, on top of '
             '``margin``. Bursty instances otherwise return once their '
             '``instance_cooldown`` is over. Derived from Nova\'s migration '
             'records. 0 disables it. The ``seed`` policy ignores it.'),
    cfg.IntOpt(
        'expected_load_halflife',
        default=600,
        min=0,
        help='Half-life, in seconds, of the exponentially weighted mean of '
             'each host\'s CPU samples: the load it is expected to carry '
             'whatever its newest sample says. A destination is judged at '
             'the higher of its current and its expected load, plus the '
             'instance: a host that has been busy is not taken for a free '
             'one on one quiet sample, nor loaded just before its own load '
             'comes back (on the benchmark\'s staggered peaks this keeps '
             'the worst host under doing nothing\'s, and it moves less '
             'memory on every trace; see doc/benchmarks-balancing.md). 0 '
             'turns it off: destinations are judged on their newest '
             'sample only.'),
    cfg.FloatOpt(
        'destination_deviations',
        default=2.0,
        min=0.0,
        help='How the ``balanced`` policy ranks the destinations that pass '
             'its ``margin`` for an instance: by their CPU after the move '
             'plus this many standard deviations of their own CPU samples '
             '(exponentially weighted, with the half-life '
             '``expected_load_halflife``). Of two hosts with room, a '
             'smooth one takes the instance before a bursty one, or one '
             'that just received a move (its step shows as spread for '
             'about a half-life). ``margin`` is still judged without '
             'it, so no destination is ruled out by it; the spread does '
             'count in the move\'s improvement (the pair\'s worst load '
             'after the move), which ``min_improvement`` judges. 0 '
             'ranks destinations by their CPU after the move alone (see '
             'doc/benchmarks-balancing.md).'),
    cfg.IntOpt(
        'benefit_horizon',
        advanced=True,
        default=3600,
        min=0,
        help='The cost-benefit rule: a balancing or leveling move is made '
             'only when the relief it is expected to buy on its source over '
             'this many seconds outweighs what it costs: the CPU its '
             'migration holds on both hosts while it runs, and the overload '
             'its destination risks at the likely peak of its own load and '
             'of the instance (their exponentially weighted means and '
             'deviations, ``expected_load_halflife``). A host over its '
             'threshold on a burst is expected to come back to its usual '
             'load within about a half-life, so a move buys little there. '
             'Relief and cost are core-minutes of CPU demand over a host\'s '
             'threshold; each move\'s record holds both. The default is '
             '``instance_cooldown``\'s: the instance stays where the move '
             'puts it at least that long. 0 turns the rule off. Drains '
             'ignore it.'),
    cfg.FloatOpt(
        'migration_bandwidth',
        default=10000.0,
        min=1.0,
        help='Bandwidth of a live migration, in Mbit/s (the link, or '
             'libvirt\'s ``live_migration_bandwidth`` if lower): with '
             '``migration_dirty_rate`` it gives how long a migration runs, '
             'a cost the cost-benefit rule counts (``benefit_horizon``).'),
    cfg.FloatOpt(
        'migration_dirty_rate',
        default=64.0,
        min=0.0,
        help='MiB of RAM each busy core of an instance dirties per second '
             'while it is live-migrated: pre-copy resends them round after '
             'round, so a busy instance takes longer to move than its RAM '
             'alone says (``migration_bandwidth``).'),
    cfg.IntOpt(
        'relief_check_delay',
        default=600,
        min=0,
        help='Seconds after a balancing or leveling move completes at which '
             'the leader checks what it really did: the relief on its '
             'source and the load of its destination, against what the '
             'plan expected, and whether the moved instance still carries '
             'the load it was moved with (what leveling learns from, '
             '``level_steady_share``). Recorded on the move, shown by '
             '``nova-drs history``.'),
    cfg.FloatOpt(
        'level_gap',
        advanced=True,
        default=10.0,
        help='Leveling, for workloads whose load jumps faster than any '
             'reaction to a violation. While the hosts of a pool see their '
             'CPU rise by ``level_rise_points`` or more in one period at '
             'least ``level_rise_rate`` times an hour on average, then, '
             'after the violated hosts have had their moves, the hottest '
             'host within ``level_band`` points of its CPU threshold sends '
             'its largest instance that leaves the coolest destination no '
             'hotter than itself, while the two differ by more than this '
             'many points; then the next hottest, up to '
             '``max_concurrent_migrations`` in flight. Destinations keep '
             '``margin``, ``no_return_time``, cooldowns and Nova\'s filters '
             'as for any move; a host may send as many as a violated host '
             '(``max_concurrent_migrations_per_violated_host``). A pool '
             'levels too while power management holds one of its hosts '
             'out (in standby, entering standby or waking), and for '
             '``level_after_wake`` after it woke one: it runs packed, and '
             'a woken host comes back empty. Elsewhere, where '
             'load rarely jumps, nothing changes. On the benchmark\'s '
             'bursty trace it left 22-31 % fewer overloaded host-periods '
             'for 3-5 times the migrations; on the traces without bursts '
             'it never ran. 0 turns leveling off. See doc/balancing.md '
             'and doc/power.md.',
        **utilization.PERCENT),
    cfg.FloatOpt(
        'level_band',
        default=10.0,
        help='How close to its CPU threshold, in points, a host must be '
             'to send a leveling migration (``level_gap``).',
        **utilization.PERCENT),
    cfg.FloatOpt(
        'level_rise_rate',
        default=3.0,
        min=0.0,
        help='Rises per host and hour (the mean over a pool\'s judged '
             'hosts, exponentially weighted with the half-life '
             '``level_rise_halflife``) from which leveling '
             '(``level_gap``) runs in that pool (a pool where power '
             'management holds a host out levels whatever its rate). 0: '
             'always.'),
    cfg.FloatOpt(
        'level_steady_share',
        default=0.45,
        min=0.0,
        max=1.0,
        help='Leveling moves load before it hurts, so it pays only where '
             'the load it moves stays. The relief check '
             '(``relief_check_delay`` after a move) also reads the moved '
             'instance\'s load: it *stayed* when the instance still '
             'carries at least half the load it was moved with. A pool '
             'stops leveling while, of its last two hours of checks (at '
             'least 20), fewer than this share found the load stayed: '
             'its loads come in bursts that end before a move pays, and '
             'relieving violations is all that helps; its destinations '
             'are then ranked at their projected load alone '
             '(``destination_deviations`` 0), as a host\'s past swing '
             'there came from bursts already gone. It levels again '
             'once its checks say otherwise. 0: never stop. On the '
             'benchmark\'s bursty trace about a third of moved loads '
             'stay, on the PlanetLab and generated days 45-100 % (at '
             '0.5, one PlanetLab day with power management stopped '
             'leveling it needed). See '
             'doc/balancing.md.'),
    cfg.IntOpt(
        'level_after_wake',
        default=21600,
        min=0,
        help='Seconds a pool keeps leveling (``level_gap``) after power '
             'management last took one of its hosts out of standby. A '
             'woken host comes back empty while the others run packed; '
             'reacting to violations alone refills it only as the others '
             'go over their thresholds, in the very ramp that woke it. '
             'The default covers a morning ramp, from the first wake to '
             'the day\'s peak. On the benchmark\'s generated day/night '
             'days at 70 % sizing it left 6-49 % fewer overloaded '
             'host-periods than leveling only while a host is held out, '
             'for 7-18 % more migrations and the same energy. 0: a pool '
             'levels only while power management holds a host out. See '
             'doc/power.md.'),
    cfg.FloatOpt(
        'level_rise_points',
        default=10.0,
        help='A rise, the evidence ``level_rise_rate`` counts: a host\'s '
             'CPU up by at least this many points from one period to the '
             'next. It measures the workload, not the rebalancer: moves '
             'change where load sits, not how often it jumps.',
        **utilization.PERCENT),
    cfg.IntOpt(
        'level_rise_halflife',
        default=3600,
        min=0,
        help='Half-life, in seconds, of each host\'s exponentially '
             'weighted rate of rises (``level_rise_rate``): a bursty spell '
             'turns leveling on within about a half-life, and a quiet one '
             'turns it off again. 0 stops counting: every rate is 0, so '
             'leveling runs only with ``level_rise_rate = 0``.'),
    cfg.StrOpt(
        'metrics_source',
        default='nova',
        help='Where host and instance CPU measurements come from, by name '
             'in the ``nova_drs_scheduler.metrics_sources`` namespace. '
             '``nova`` samples the ``cpu.percent`` compute monitor and '
             'instance diagnostics; ``prometheus`` runs the PromQL queries '
             'of ``[drs_prometheus]`` (node_exporter and a libvirt '
             'exporter; needs the ``[prometheus]`` extra); ``static`` '
             'reads ``static_metrics_file`` (tests, demos, simulation).'),
    cfg.StrOpt(
        'static_metrics_file',
        help='JSON file read by the ``static`` metric source on every '
             'period; required when ``metrics_source = static``.'),
    cfg.IntOpt(
        'rebalance_interval',
        default=60,
        min=1,
        help='Seconds between two rebalance periods. Each period adds one '
             'sample to every host\'s window and advances its '
             'stabilization counter, so ``window`` and ``stabilization`` '
             'are counted in these periods. Keep it near '
             '``[DEFAULT] update_resources_interval``.'),
    cfg.FloatOpt(
        'instance_metrics_timeout',
        default=10.0,
        min=0.1,
        help='Seconds a rebalance period waits for the CPU load of the '
             'instances on hosts over their threshold. The ``nova`` '
             'metric source asks each instance\'s compute for its '
             'diagnostics over RPC, hosts side by side; without a deadline '
             'one hung compute or a message-queue restart stalls the whole '
             'period, up to ``[DEFAULT] rpc_response_timeout`` per '
             'instance. A host whose instances are not all measured in '
             'time is not relieved in that period (its decision record '
             'says so, rule ``instance_metrics_timeout``) and is measured '
             'again at the next one. Keep it well below '
             '``rebalance_interval``.'),
]


for _opt in OPTS:
    if _opt.name in LEVELS:
        _opt.help += (
            ' Advanced: ``aggressiveness`` sets it unless it is set here '
            '(levels 1 to 5: ' + ', '.join(
                f'{level:g}' for level in LEVELS[_opt.name]) + ').')


def list_opts():
    return {utilization.drs_group: OPTS}


def explicit(conf, name: str) -> bool:
    """Whether ``[drs] name`` is set (configuration file, command line,
    environment, or a program's override), not left to its default.

    A value from the operator counts even when it equals the default.
    A program's ``set_override`` or ``set_default`` counts only while it
    differs from the default: oslo.config keeps reporting the location of
    an override after ``clear_override`` (tests clear theirs).
    """
    location = conf.get_location(name, utilization.drs_group.name).location
    if location.is_user_controlled:
        return True
    if location is cfg.Locations.opt_default:
        return False
    default = next(opt.default for opt in OPTS if opt.name == name)
    return getattr(conf.drs, name) != default


def value(conf, name: str):
    """``[drs] name`` in force: the value set for it if any, else the
    one ``[drs] aggressiveness`` gives it (:data:`LEVELS`), else its
    default."""
    if name not in LEVELS or explicit(conf, name):
        return getattr(conf.drs, name)
    return LEVELS[name][conf.drs.aggressiveness - 1]


def overrides(conf) -> dict:
    """The options of :data:`LEVELS` set explicitly, with their value."""
    return {name: getattr(conf.drs, name) for name in LEVELS
            if explicit(conf, name)}


def level_settings(conf) -> dict:
    """What ``nova-drs status`` shows: the level, its name, and each
    option it sets with the value in force and whether it is the
    level's or set explicitly."""
    level = conf.drs.aggressiveness
    return {'aggressiveness': level, 'name': LEVEL_NAMES[level - 1],
            'options': {name: {'value': value(conf, name),
                               'level_value': LEVELS[name][level - 1],
                               'overridden': explicit(conf, name)}
                        for name in LEVELS}}


def _names(namespace: str) -> list[str]:
    return sorted({ep.name for ep in metadata.entry_points(group=namespace)})


def check(conf):
    """Cross-option rules that types and bounds cannot express."""
    drs = conf.drs
    known = _names(plugin_namespaces.POLICIES)
    if drs.policy not in known:
        return (f'Invalid value for option [drs] policy: {drs.policy!r} is '
                f'not an installed policy ({", ".join(known)}).')
    if drs.automation != 'off':
        known = _names(plugin_namespaces.METRICS_SOURCES)
        if drs.metrics_source not in known:
            return (f'Invalid value for option [drs] metrics_source: '
                    f'{drs.metrics_source!r} is not an installed metric '
                    f'source ({", ".join(known)}).')
        if drs.metrics_source == 'static' and not drs.static_metrics_file:
            return ('Invalid value for option [drs] static_metrics_file: '
                    'required when [drs] metrics_source = static.')
    if drs.margin >= min(drs.cpu_threshold, drs.ram_threshold):
        return ('Invalid value for option [drs] margin: it must be below '
                '[drs] cpu_threshold and [drs] ram_threshold, or no host '
                'could ever be a destination.')
    return None

