"""Host weighers of nova-drs-scheduler.

Add them to Nova's own weighers in nova.conf::

    [filter_scheduler]
    weight_classes = nova.scheduler.weights.all_weighers
    weight_classes = nova_drs_scheduler.weighers.all_weighers
"""

from stevedore import extension

from nova_drs_scheduler.weighers.utilization import UtilizationWeigher

NAMESPACE = 'nova_drs_scheduler.weighers'

__all__ = ['UtilizationWeigher', 'all_weighers']


def all_weighers():
    """Every weigher registered in our stevedore namespace."""
    manager = extension.ExtensionManager(NAMESPACE)
    return [ext.plugin for ext in sorted(manager, key=lambda e: e.name)]
