"""``[scheduler] driver`` and ``host_manager``, which Nova removed.

Nova dropped ``[scheduler] driver`` in Xena and ``host_manager`` in Rocky;
the ``nova-drs-scheduler`` service honours them again, resolved through
the same stevedore namespaces Nova used, so third-party packages can
register their own.  The legacy ``[DEFAULT]`` names of old nova.conf files
are accepted and translated with a deprecation warning.
"""

from oslo_config import cfg

scheduler_group = cfg.OptGroup('scheduler', title='Scheduler options')

DRIVER_NAMESPACE = 'nova.scheduler.driver'
HOST_MANAGER_NAMESPACE = 'nova.scheduler.host_manager'

OPTS = [
    cfg.StrOpt(
        'driver',
        default='drs_scheduler',
        help='Scheduler manager run by the nova-drs-scheduler service, by '
             'name in the ``nova.scheduler.driver`` entry-point namespace. '
             '``drs_scheduler`` is the DRS manager (Nova\'s scheduler plus '
             'the rebalancer); ``filter_scheduler`` is Nova\'s stock '
             'manager. Other packages may register more. Nova itself '
             'ignores this option since Xena; only nova-drs-scheduler '
             'reads it.'),
    cfg.StrOpt(
        'host_manager',
        help='Host manager used by the scheduler manager, by name in the '
             '``nova.scheduler.host_manager`` entry-point namespace: '
             '``host_manager`` (Nova\'s stock one) or '
             '``caching_host_manager`` (caches compute-node and service '
             'rows with bounded staleness). Unset, each driver uses its '
             'own default: caching for ``drs_scheduler``, stock for '
             '``filter_scheduler``.'),
]

#: Legacy [DEFAULT] name -> (new group, new name).
LEGACY = {
    'scheduler_driver': ('scheduler', 'driver'),
    'scheduler_host_manager': ('scheduler', 'host_manager'),
    'scheduler_default_filters': ('filter_scheduler', 'enabled_filters'),
    'scheduler_available_filters': ('filter_scheduler', 'available_filters'),
}

LEGACY_OPTS = [
    cfg.StrOpt(
        'scheduler_driver', deprecated_for_removal=True,
        deprecated_reason='Use [scheduler] driver.',
        help='Legacy name of [scheduler] driver (Nova before Xena). '
             'Old values are translated: ``caching_scheduler`` becomes '
             '``filter_scheduler`` with ``caching_host_manager``.'),
    cfg.StrOpt(
        'scheduler_host_manager', deprecated_for_removal=True,
        deprecated_reason='Use [scheduler] host_manager.',
        help='Legacy name of [scheduler] host_manager.'),
    cfg.ListOpt(
        'scheduler_default_filters', deprecated_for_removal=True,
        deprecated_reason='Use [filter_scheduler] enabled_filters.',
        help='Legacy name of [filter_scheduler] enabled_filters.'),
    cfg.MultiStrOpt(
        'scheduler_available_filters', deprecated_for_removal=True,
        deprecated_reason='Use [filter_scheduler] available_filters.',
        help='Legacy name of [filter_scheduler] available_filters.'),
]


def list_opts():
    return {scheduler_group: OPTS, cfg.OptGroup('DEFAULT'): LEGACY_OPTS}
