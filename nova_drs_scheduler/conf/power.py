"""Options of power management (``[drs] power_*``).

The defaults are what an operator of VMware DPM expects: a target band of
63 % +/- 18 (DPM's ``DemandCapacityRatioTarget`` and
``DemandCapacityRatioToleranceHost``): a pool keeps the hosts its
forecast needs at the band's middle, powers the others off once that has
held for a while, and powers hosts on before demand needs them.
"""

from oslo_config import cfg

from nova_drs_scheduler.conf import utilization

OPTS = [
    cfg.StrOpt(
        'power_management',
        default='off',
        choices=[
            ('off', 'No host is put in standby; hosts already in standby '
                    'stay there until woken by an operator.'),
            ('manual', 'Recommend standby and wake actions (``nova-drs '
                       'recommendations``), applied by ``nova-drs '
                       'apply``.'),
            ('automatic', 'Drain hosts into standby and wake them through '
                          'the power driver (``power_driver``).'),
        ],
        help='Power management level: consolidate a pool onto the hosts its '
             'forecast demand needs and power the freed hosts off, and '
             'power hosts back on before demand needs them (vSphere '
             'DPM\'s automation level). Aggregate metadata '
             '``drs_power_management`` overrides it for the hosts of the '
             'aggregate.'),
    cfg.FloatOpt(
        'power_band_low',
        default=45.0,
        help='Bottom of the target band, percent of the CPUs of a pool\'s '
             'hosts that take load (on, not in maintenance or entering '
             'standby). With ``power_band_high`` it sets the band\'s '
             'middle (63 by default), the utilization each host a pool '
             'keeps holds the forecast demand under: a pool keeps the '
             'fewest hosts that hold it so, plus ``power_reserve_hosts``, '
             'and sheds the others (several at once where each passes the '
             'per-host check). Higher keeps fewer hosts on. vSphere DPM: '
             '``DemandCapacityRatioTarget`` minus '
             '``DemandCapacityRatioToleranceHost`` (63 - 18).',
        **utilization.PERCENT),
    cfg.FloatOpt(
        'power_band_high',
        default=81.0,
        help='Top of the target band, percent. A host is woken when the '
             'pool\'s forecast demand would cross it, or would take its '
             'hosts over their CPU threshold less ``margin`` (whichever is '
             'lower); a standby needs every host left under its threshold '
             'less ``margin`` at the forecast once the standby host\'s '
             'instances are placed. vSphere DPM: '
             '``DemandCapacityRatioTarget`` plus '
             '``DemandCapacityRatioToleranceHost`` (63 + 18).',
        **utilization.PERCENT),
    cfg.IntOpt(
        'power_reserve_hosts',
        default=1,
        min=0,
        help='Hosts kept on in each pool beyond those the forecast demand '
             'needs under the band\'s top: headroom for a burst the '
             'forecast did not see while a woken host boots. A host that '
             'would eat into the reserve is not put in standby, and a '
             'host is woken when demand grows into it (oVirt\'s '
             '"hosts in reserve"; vSphere DPM has no direct equivalent, '
             'its HA admission control plays that part).'),
    cfg.IntOpt(
        'power_min_hosts',
        default=2,
        min=1,
        help='Never fewer than this many hosts taking load in a pool, '
             'whatever the demand; a host is woken when a pool has fewer. '
             'vSphere DPM: the ``MinPoweredOnCpuCapacity``/'
             '``MinPoweredOnMemCapacity`` floor, counted in hosts.'),
    cfg.IntOpt(
        'power_low_periods',
        default=6,
        min=1,
        help='Consecutive rebalance periods a pool must have had more hosts '
             'taking load than it keeps (see ``power_band_low``) before '
             'its hosts to spare are put in standby; the wait is this '
             'times ``rebalance_interval``. '
             'vSphere DPM judges a power-off on 40 minutes of demand '
             '(``VmDemandHistorySecsHostOff``, 2400 s): with a 60 s '
             'interval, 40 periods match it; the default acts sooner and '
             'leaves the rest to the forecast and the reserve.'),
    cfg.IntOpt(
        'power_boot_seconds',
        default=600,
        min=0,
        help='Seconds from power-on to the host\'s nova-compute reporting '
             'up. A standby host is woken when the pool\'s demand is '
             'forecast to need it within this time plus one period; a '
             'power driver that measures boots replaces it with its '
             'measurement once it has one (vSphere DPM learns it per '
             'host the same way).'),
    cfg.FloatOpt(
        'power_forecast_deviations',
        default=1.0,
        min=0.0,
        help='Standard deviations of the forecast\'s error added to the '
             'forecast demand before comparing it with the band: higher '
             'wakes hosts earlier and puts fewer in standby (safer, less '
             'saved). 0 trusts the forecast as is. doc/power.md says '
             'how the forecast was judged.'),
    cfg.FloatOpt(
        'power_idle_watts',
        min=0.0,
        help='Watts an idle host draws while on: with '
             '``power_standby_watts``, the watts model ``nova-drs status`` '
             'turns the host-hours spent in standby into kWh saved, '
             '(idle - standby) watts per host-hour. An idle host is what '
             'standby replaces: its instances moved to hosts already on. '
             'Unset (the default), status shows host-hours only. Read it '
             'off a host\'s BMC or PDU, or its SPECpower result at 0 % '
             'load.'),
    cfg.FloatOpt(
        'power_standby_watts',
        min=0.0,
        help='Watts a host in standby still draws (its BMC and fans, '
             'powered off but plugged in), below ``power_idle_watts``; set '
             'both or neither. Unset (the default), status shows '
             'host-hours only.'),
]


def list_opts():
    return {utilization.drs_group: OPTS}


def check(conf) -> str | None:
    """The band must be a band; the watts model needs both its figures,
    and a standby that saves something."""
    drs = conf.drs
    if drs.power_band_low >= drs.power_band_high:
        return (f'Invalid value for option [drs] power_band_low: '
                f'{drs.power_band_low:g} must be below [drs] '
                f'power_band_high ({drs.power_band_high:g}).')
    idle, standby = drs.power_idle_watts, drs.power_standby_watts
    if (idle is None) != (standby is None):
        given, missing = (('power_idle_watts', 'power_standby_watts')
                          if standby is None else
                          ('power_standby_watts', 'power_idle_watts'))
        return (f'Invalid value for option [drs] {missing}: unset, while '
                f'[drs] {given} is set; set both (the watts model) or '
                f'neither.')
    if idle is not None and standby >= idle:
        return (f'Invalid value for option [drs] power_standby_watts: '
                f'{standby:g} must be below [drs] power_idle_watts '
                f'({idle:g}).')
    return None


def saved_kwh(conf, host_hours: float) -> float | None:
    """The energy ``host_hours`` in standby saved, in kWh, by the watts
    model of ``[drs]``; None without one."""
    drs = conf.drs
    if drs.power_idle_watts is None or drs.power_standby_watts is None:
        return None
    return host_hours * (drs.power_idle_watts
                         - drs.power_standby_watts) / 1000.0
