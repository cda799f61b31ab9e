"""Runs Nova's functional tests with our scheduler manager.

``DRSSchedulerManager`` is what ``nova-drs-scheduler`` runs: Nova's
``SchedulerManager`` over ``CachingHostManager``, with its own request-path
changes (allocation request copies, the cached ``OWNER_NOVA`` decision).
"""

from oslo_config import cfg

from nova_drs_scheduler.testing import fixtures as drs_fixtures
from tests.functional import base

#: Dotted path for ``start_service('scheduler', manager=...)``.
PATH = 'nova_drs_scheduler.manager.DRSSchedulerManager'


class CachingSchedulerMixin:
    """Starts any Nova functional test's scheduler with our manager."""

    def setUp(self):
        # Nova's own test classes need the venv's api-paste.ini too.
        self.flags(api_paste_config=base.api_paste_config(), group='wsgi')
        self.useFixture(drs_fixtures.DRSDatabaseFixture(cfg.CONF))
        super().setUp()

    def start_service(self, name, host=None, **kwargs):
        if name == 'scheduler':
            kwargs.setdefault('manager', PATH)
        return super().start_service(name, host=host, **kwargs)
