"""Options of the measured-utilization filter and weigher (``[drs]``)."""

from oslo_config import cfg

#: Bounds of an option in percent.
PERCENT = {'min': 0.0, 'max': 100.0}

drs_group = cfg.OptGroup(
    'drs',
    title='Dynamic resource scheduling',
    help='Options of nova-drs-scheduler: the utilization filter and '
         'weigher, and the rebalancer.')

OPTS = [
    cfg.IntOpt(
        'metrics_max_age',
        default=180,
        min=1,
        help='Maximum age, in seconds, of a host CPU sample '
             '(the ``cpu.percent`` compute-monitor metric). An older sample '
             'is stale: the host is treated as having no measurement. '
             'Compute nodes refresh their metrics every '
             '``[DEFAULT] update_resources_interval`` (60 s by default), so '
             'keep this at two or three times that interval.'),
    cfg.FloatOpt(
        'max_cpu_utilization',
        default=90.0,
        min=0.0,
        max=100.0,
        help='UtilizationFilter: reject a host whose measured CPU '
             'utilization, in percent of its physical CPUs, is above this '
             'ceiling.'),
    cfg.FloatOpt(
        'max_ram_utilization',
        min=0.0,
        max=100.0,
        help='UtilizationFilter: reject a host whose allocated RAM '
             '(the compute node\'s memory_mb_used: flavors\' RAM plus '
             'reserved, not measured use) is above this percent of its '
             'physical memory: a ceiling on RAM over-commit. Unset (the '
             'default) disables the RAM check.'),
    cfg.StrOpt(
        'missing_metrics_action',
        default='pass',
        choices=[
            ('pass', 'A host with no, stale or invalid CPU metrics passes '
                     'the UtilizationFilter, as Nova\'s classic filters '
                     'pass hosts whose capacity is unknown.'),
            ('reject', 'A host with no, stale or invalid CPU metrics is '
                       'rejected: only measured hosts get new load.'),
        ],
        help='What the UtilizationFilter does with a host that has no '
             'usable CPU measurement. The filter logs each such host once.'),
    cfg.FloatOpt(
        'utilization_weight_multiplier',
        default=1.0,
        help='Multiplier of the UtilizationWeigher. Positive values prefer '
             'hosts with the lowest projected utilization (spread by real '
             'load); negative values prefer the busiest hosts (pack). The '
             'aggregate metadata key ``drs_utilization_weight_multiplier`` '
             'overrides it per aggregate (the minimum wins when a host is '
             'in several).'),
    cfg.FloatOpt(
        'cpu_utilization_weight',
        default=1.0,
        min=0.0,
        help='Relative weight of projected CPU utilization in the '
             'UtilizationWeigher.'),
    cfg.FloatOpt(
        'ram_utilization_weight',
        default=1.0,
        min=0.0,
        help='Relative weight of projected RAM in the UtilizationWeigher: '
             'allocated RAM (the compute node\'s memory_mb_used) plus the '
             'flavor\'s, over physical memory.'),
    cfg.FloatOpt(
        'expected_vcpu_load',
        default=50.0,
        min=0.0,
        max=100.0,
        help='CPU demand, in percent of one vCPU, that the weigher expects '
             'from each vCPU of a new instance when it projects a host\'s '
             'utilization after placement.'),
    cfg.FloatOpt(
        'unmeasured_cpu_utilization',
        default=100.0,
        min=0.0,
        max=100.0,
        help='CPU utilization, in percent, that the UtilizationWeigher '
             'assumes for a host with no, stale or invalid CPU metrics. '
             'The default ranks unmeasured hosts last.'),
]


def list_opts():
    return {drs_group: OPTS}


def check(conf):
    """Cross-option rules that bounds alone cannot express."""
    drs = conf.drs
    if drs.cpu_utilization_weight == 0 and drs.ram_utilization_weight == 0:
        return ('Invalid value for options [drs] cpu_utilization_weight and '
                '[drs] ram_utilization_weight: they cannot both be 0.')
    return None
