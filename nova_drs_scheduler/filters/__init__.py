"""Scheduler filters of nova-drs-scheduler.

Enable them in nova.conf with::

    [filter_scheduler]
    available_filters = nova.scheduler.filters.all_filters
    available_filters = nova_drs_scheduler.filters.all_filters
    enabled_filters = ...,AggregateCoreFilter,UtilizationFilter
"""

from stevedore import extension

from nova_drs_scheduler.filters.core import AggregateCoreFilter
from nova_drs_scheduler.filters.core import CoreFilter
from nova_drs_scheduler.filters.disk import AggregateDiskFilter
from nova_drs_scheduler.filters.disk import DiskFilter
from nova_drs_scheduler.filters.pool import DRSPoolFilter
from nova_drs_scheduler.filters.ram import AggregateRamFilter
from nova_drs_scheduler.filters.ram import RamFilter
from nova_drs_scheduler.filters.utilization import UtilizationFilter

NAMESPACE = 'nova_drs_scheduler.filters'

__all__ = [
    'AggregateCoreFilter', 'AggregateDiskFilter', 'AggregateRamFilter',
    'CoreFilter', 'DRSPoolFilter', 'DiskFilter', 'RamFilter',
    'UtilizationFilter', 'all_filters',
]


def all_filters():
    """Every filter registered in our stevedore namespace.

    Nova calls this through ``[filter_scheduler] available_filters``;
    plug-ins from other packages registered in the same namespace appear
    here too.
    """
    manager = extension.ExtensionManager(NAMESPACE)
    return [ext.plugin for ext in sorted(manager, key=lambda e: e.name)]
