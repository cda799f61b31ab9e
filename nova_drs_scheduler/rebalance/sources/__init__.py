"""Metric sources, pluggable through a stevedore namespace.

``[drs] metrics_source`` names the source; a third-party package adds one
by registering a :class:`~.base.MetricsSource` subclass under
``nova_drs_scheduler.metrics_sources``.
"""

from stevedore import driver
from stevedore import exception

from nova_drs_scheduler import plugin_namespaces
from nova_drs_scheduler.rebalance.sources import base


def load(conf) -> base.MetricsSource:
    """Instantiate the source named by ``[drs] metrics_source``."""
    name = conf.drs.metrics_source
    namespace = plugin_namespaces.METRICS_SOURCES
    try:
        return driver.DriverManager(
            namespace, name, invoke_on_load=True, invoke_args=(conf,),
            on_load_failure_callback=_raise).driver
    except exception.NoMatches:
        raise ValueError(f'Invalid value for option [drs] metrics_source: '
                         f'no metric source named {name!r} is installed '
                         f'(namespace {namespace}).')


def _raise(_manager, _entrypoint, exc):
    """A source that fails to import (e.g. a missing extra) stops the
    service with its own error, not as "no source named ..."."""
    raise exc
