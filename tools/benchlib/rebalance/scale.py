"""Planning time at scale: our policies' input-building and decision time per
period as the cloud grows.
"""

from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies

#: 20 VMs of the default flavor mix use about 6 cores: 10-CPU hosts run
#: them at about 60 %.
SCALE_HOST_VCPUS = 10
SCALE_HOST_RAM_MB = 128 * 1024


def planning_time(host_counts, vms_per_host: int, steps: int, names,
                  seed: int, config_files=()) -> list:
    """Per host count and policy, the decision and input-building times
    of a trace of ``vms_per_host`` VMs a host over ``steps`` steps."""
    rows = []
    for hosts in host_counts:
        argv = ['--vms', str(hosts * vms_per_host), '--steps', str(steps),
                '--seed', str(seed), '--hosts', str(hosts),
                '--host-vcpus', str(SCALE_HOST_VCPUS),
                '--host-ram-mb', str(SCALE_HOST_RAM_MB)]
        for path in config_files:
            argv += ['--config-file', path]
        setup = cli.prepare(cli.parser().parse_args(argv))
        trace, vms, spec = setup.trace, setup.vms, setup.spec
        config, settings = setup.config, setup.settings
        for name in names:
            result = engine.run(trace, vms, spec,
                                strategies.build(name, config, seed, {}),
                                settings)
            card = result.card
            summary = card.summary()
            rows.append({
                'hosts': hosts, 'vms': len(vms), 'strategy': name,
                'mean_load': round(result.mean_load, 1),
                'periods': len(card.plan_seconds),
                'migrations': summary['migrations'],
                'input_ms_mean': summary['input_ms_mean'],
                'plan_ms_mean': summary['plan_ms_mean'],
                'plan_ms_p95': summary['plan_ms_p95'],
                'plan_ms_max': round(1000 * max(card.plan_seconds), 3),
                'total_ms_p95': summary['total_ms_p95']})
            print(f'scale: {rows[-1]}', flush=True)
    return rows
