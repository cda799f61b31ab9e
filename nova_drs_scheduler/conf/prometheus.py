"""``[drs_prometheus]``: the Prometheus metric source.

Defaults match node_exporter for hosts and the libvirt exporter that
Kolla-Ansible and OpenStack-Helm deploy (``libvirt_domain_*`` series with a
``libvirt_domain_openstack_info`` join) for instances.  CPU contention, the
demand a CPU capped at 100 % cannot show, is read from node_exporter's CPU
pressure (PSI) for hosts and from the libvirt exporter's vCPU wait for
instances; :data:`LIBVIRT_HOST_CONTENTION_QUERY` reads a host's from its
instances' vCPU wait instead (doc/rebalancer.md).
"""

import re

from oslo_config import cfg

prometheus_group = cfg.OptGroup(
    'drs_prometheus',
    title='DRS Prometheus metric source',
    help='Used when ``[drs] metrics_source = prometheus``.')

HOST_CPU_QUERY = ('100 * (1 - avg by (instance) '
                  '(rate(node_cpu_seconds_total{mode="idle"}[5m])))')
HOST_RAM_QUERY = ('100 * (1 - node_memory_MemAvailable_bytes '
                  '/ node_memory_MemTotal_bytes)')
INSTANCE_CPU_QUERY = (
    'sum by (instance_id) ('
    'rate(libvirt_domain_info_cpu_time_seconds_total[5m]) '
    '* on (instance, domain) group_left(instance_id) '
    'libvirt_domain_openstack_info)')

# Contention queries answer cores waiting for a CPU (seconds waited per
# second).  PSI's "some" counter is the time at least one task waited, so
# it reads as one core waiting that long: a lower bound.
HOST_CONTENTION_QUERY = 'rate(node_pressure_cpu_waiting_seconds_total[5m])'
LIBVIRT_HOST_CONTENTION_QUERY = (
    'sum by (instance) (rate(libvirt_domain_vcpu_wait_seconds_total[5m]))')
INSTANCE_CONTENTION_QUERY = (
    'sum by (instance_id) ('
    'rate(libvirt_domain_vcpu_wait_seconds_total[5m]) '
    '* on (instance, domain) group_left(instance_id) '
    'libvirt_domain_openstack_info)')

OPTS = [
    cfg.URIOpt(
        'url', default='http://127.0.0.1:9090', schemes=['http', 'https'],
        help='Base URL of the Prometheus server (the HTTP API is under '
             '``/api/v1``).'),
    cfg.StrOpt(
        'host_cpu_query', default=HOST_CPU_QUERY,
        help='PromQL instant query returning each compute host\'s CPU '
             'utilization in percent of its physical CPUs, one series per '
             'host, labelled with ``host_label``.'),
    cfg.StrOpt(
        'host_ram_query', default=HOST_RAM_QUERY,
        help='PromQL instant query returning each host\'s memory '
             'utilization in percent, labelled with ``host_label``. Empty '
             'disables RAM from Prometheus (hosts are then judged on CPU '
             'only).'),
    cfg.StrOpt(
        'instance_cpu_query', default=INSTANCE_CPU_QUERY,
        help='PromQL instant query returning each instance\'s CPU use in '
             'cores (CPU seconds per second), labelled with '
             '``instance_label`` holding the Nova instance UUID.'),
    cfg.StrOpt(
        'host_contention_query', default=HOST_CONTENTION_QUERY,
        help='PromQL instant query returning each host\'s CPU contention: '
             'cores of demand waiting for a CPU (seconds waited per '
             'second), one series per host, labelled with ``host_label``. '
             'It shows the demand beyond 100 % that ``host_cpu_query`` '
             'cannot. The default reads node_exporter\'s CPU pressure '
             '(PSI, ``node_pressure_cpu_waiting_seconds_total``: the time '
             'at least one task waited, so a lower bound); ``' +
             LIBVIRT_HOST_CONTENTION_QUERY + '`` sums the libvirt '
             'exporter\'s vCPU wait of the host\'s instances instead. A '
             'host without a valid series, or every host when the query '
             'fails, is judged on its CPU alone, as the decision record '
             'says. Empty disables it.'),
    cfg.StrOpt(
        'instance_contention_query', default=INSTANCE_CONTENTION_QUERY,
        help='PromQL instant query returning the cores of each '
             'instance\'s demand waiting for a CPU (its vCPUs\' wait, '
             'seconds per second), labelled with ``instance_label``. The '
             'default reads the libvirt exporter\'s '
             '``libvirt_domain_vcpu_wait_seconds_total``. An instance '
             'without a valid series has no contention measured. Empty '
             'disables it.'),
    cfg.StrOpt(
        'host_label', default='instance',
        help='Label of the host queries that names the compute host.'),
    cfg.StrOpt(
        'host_label_pattern', default=r'^([^:]+)',
        help='Regular expression applied to ``host_label``; its first '
             'group must be the Nova compute host name (as in ``openstack '
             'compute service list``). The default strips the ``:port`` '
             'of node_exporter\'s ``instance`` label.'),
    cfg.StrOpt(
        'instance_label', default='instance_id',
        help='Label of the instance query holding the instance UUID.'),
    cfg.FloatOpt(
        'timeout', default=10.0, min=0.1,
        help='Seconds to wait for one query. A period whose queries fail '
             'or time out makes no moves.'),
    cfg.StrOpt(
        'ca_file',
        help='CA bundle to verify the server\'s TLS certificate; unset uses '
             'the system trust store.'),
    cfg.BoolOpt(
        'insecure', default=False,
        help='Skip TLS certificate verification. For testing only.'),
    cfg.StrOpt(
        'cert_file', help='Client certificate (PEM) for mutual TLS.'),
    cfg.StrOpt(
        'key_file', help='Private key (PEM) of ``cert_file``.'),
    cfg.StrOpt(
        'username', help='HTTP basic-auth user name.'),
    cfg.StrOpt(
        'password', secret=True, help='HTTP basic-auth password.'),
    cfg.StrOpt(
        'bearer_token_file',
        help='File holding a bearer token sent as ``Authorization: Bearer``; '
             'read at each query so a rotated token is picked up.'),
]


def list_opts():
    return {prometheus_group: OPTS}


def check(conf):
    opts = conf.drs_prometheus
    try:
        pattern = re.compile(opts.host_label_pattern)
    except re.error as exc:
        return ('Invalid value for option [drs_prometheus] '
                f'host_label_pattern: {exc}')
    if pattern.groups < 1:
        return ('Invalid value for option [drs_prometheus] '
                'host_label_pattern: it needs a group capturing the host.')
    if bool(opts.cert_file) != bool(opts.key_file):
        return ('Invalid value for options [drs_prometheus] cert_file and '
                'key_file: set both or neither.')
    if opts.username and opts.bearer_token_file:
        return ('Invalid value for options [drs_prometheus] username and '
                'bearer_token_file: choose one authentication method.')
    return None
