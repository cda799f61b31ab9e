"""Test-only scheduler manager running Nova's code over our host manager."""

from nova.scheduler import manager

from nova_drs_scheduler.host_manager import CachingHostManager
from tests.functional import base

#: Dotted path for ``start_service('scheduler', manager=...)``.
PATH = __name__ + '.CachingSchedulerManager'


class CachingSchedulerManager(manager.SchedulerManager):
    """Nova's SchedulerManager with only its host manager swapped."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.host_manager = CachingHostManager()


class CachingSchedulerMixin:
    """Starts any Nova functional test's scheduler with our host manager."""

    def setUp(self):
        # Nova's own test classes need the venv's api-paste.ini too.
        self.flags(api_paste_config=base.api_paste_config(), group='wsgi')
        super().setUp()

    def start_service(self, name, host=None, **kwargs):
        if name == 'scheduler':
            kwargs.setdefault('manager', PATH)
        return super().start_service(name, host=host, **kwargs)
