"""``[drs] exporter_*``: the scheduler's own Prometheus metrics endpoint."""

from oslo_config import cfg

from nova_drs_scheduler.conf import utilization

OPTS = [
    cfg.PortOpt(
        'exporter_port',
        default=0,
        help='TCP port on which the scheduler serves its rebalancer '
             'metrics in the Prometheus text format (per-host window '
             'averages, counters and verdicts, periods run and skipped, '
             'moves, period duration, leadership), for Prometheus to '
             'scrape and Grafana to show (doc/grafana-dashboard.json). '
             '0, the default, serves nothing. With several scheduler '
             'workers on one host, the first worker to bind the port '
             'serves it.'),
    cfg.HostAddressOpt(
        'exporter_host',
        default='127.0.0.1',
        help='Address the metrics endpoint listens on; ``0.0.0.0`` for '
             'every interface.'),
]


def list_opts():
    return {utilization.drs_group: OPTS}
