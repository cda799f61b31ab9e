"""``[drs] coordination_backend_url``: leader election through tooz."""

from oslo_config import cfg

from nova_drs_scheduler.conf import utilization

OPTS = [
    cfg.StrOpt(
        'coordination_backend_url',
        secret=True,
        help='tooz coordination backend that elects the one rebalancer of '
             'the cloud, e.g. ``redis://127.0.0.1:6379?lock_timeout=30``, '
             '``etcd3+http://127.0.0.1:2379``, '
             '``mysql://user:pass@db/tooz`` or ``file:///var/lib/nova/drs`` '
             '(one host only). The holder of the lock plans and migrates; '
             'the others wait. When the holder dies, another takes over '
             'once its lease expires (the backend\'s lock timeout; at once '
             'for ``file://``). Unset, the leader is the lowest-named '
             'nova-scheduler host whose service is up, which needs no '
             'extra service but waits for Nova\'s service_down_time to '
             'notice a dead leader.'),
    cfg.StrOpt(
        'coordination_lock_name',
        default='nova-drs-rebalancer',
        help='Name of the tooz lock; clouds sharing one backend need '
             'different names.'),
]


def list_opts():
    return {utilization.drs_group: OPTS}
