"""Rebalancing policies, pluggable through a stevedore namespace.

A third-party package adds a policy by registering a
:class:`~nova_drs_scheduler.planning.policies.base.Policy` subclass under
``nova_drs_scheduler.policies`` in its entry points; ``[drs] policy`` names
it.
"""

import functools

from stevedore import driver

from nova_drs_scheduler import plugin_namespaces
from nova_drs_scheduler.planning.policies import base


@functools.cache
def get(name: str) -> base.Policy:
    """The policy registered as ``name``, loaded once per process."""
    return driver.DriverManager(plugin_namespaces.POLICIES, name,
                                invoke_on_load=True).driver
