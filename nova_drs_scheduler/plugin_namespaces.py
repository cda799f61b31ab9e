"""The stevedore namespaces that ``[drs] policy`` and ``metrics_source``
name an entry of.

Below both the options, which check a name against what is installed
(``conf.rebalance.check``), and the planner and the live side that load
from them: the planner may not import the options.
"""

POLICIES = 'nova_drs_scheduler.policies'
METRICS_SOURCES = 'nova_drs_scheduler.metrics_sources'
