"""The demo's cloud: Nova's own functional-test fixtures, run as a program.

Nova's fixtures (in-memory databases, in-process placement, API, conductor
and fake-driver computes) only work inside a test case's life cycle, so
the demo *is* one test case, run by :func:`run` with a plain unittest
result: fixtures and cleanups are set up and torn down exactly as in our
functional tests, even when the demo fails half-way.
"""

import json
import logging
import os
import re
import time
import unittest

import fixtures
from nova import context as nova_context
from nova import objects
from nova.tests.functional import integrated_helpers
from oslo_config import cfg

from nova_drs_scheduler.demo import scenario
from nova_drs_scheduler.testing import fixtures as drs_fixtures

#: Scheduler filters of the demo: Nova's usual ones.
FILTERS = ['ComputeFilter', 'ComputeCapabilitiesFilter',
           'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
           'ServerGroupAffinityFilter']
MANAGER = 'nova_drs_scheduler.manager.DRSSchedulerManager'


class DemoCloud(integrated_helpers.ProviderUsageBaseTestCase):
    """Ten fake computes, two pools, forty servers, our scheduler."""

    compute_driver = 'fake.MediumFakeDriver'
    #: Set by :func:`run`: ``story(cloud)`` drives the demo.
    story = None
    #: [drs] options of the demo.
    drs = {}

    def setUp(self):
        self.flags(api_paste_config=drs_fixtures.api_paste_config(),
                   group='wsgi')
        self.metrics_file = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'metrics.json')
        self.write_metrics({}, {})
        self.flags(static_metrics_file=self.metrics_file,
                   metrics_source='static', **self.drs, group='drs')
        self.flags(enabled_filters=FILTERS, host_subset_size=1,
                   group='filter_scheduler')
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')
        # The DRS database: an SQLite file the scheduler creates.
        self.useFixture(drs_fixtures.DRSDatabaseFixture(cfg.CONF))
        super().setUp()

    def start_service(self, name, host=None, **kwargs):
        if name == 'scheduler':
            kwargs['manager'] = MANAGER
        return super().start_service(name, host=host, **kwargs)

    def runTest(self):
        type(self).story(self)

    # Building.

    def build(self, flavor_vcpus: int) -> dict:
        """Computes, aggregates and servers; ``{server name: uuid}``."""
        for host in scenario.HOSTS:
            self._start_compute(host)
        for pool, hosts in scenario.POOLS.items():
            agg = self.admin_api.post_aggregate({'aggregate': {'name': pool}})
            for host in hosts:
                self.admin_api.add_host_to_aggregate(agg['id'], host)
        flavor = self._create_flavor(name='demo', vcpu=flavor_vcpus,
                                     memory_mb=1024, disk=1, ephemeral=0)
        servers = {}
        for name, host in scenario.placement().items():
            server = self._create_server(name=name, flavor_id=flavor,
                                         host=host, networks='none')
            servers[name] = server['id']
        return servers

    # Driving.

    def write_metrics(self, hosts: dict, instances: dict) -> None:
        data = {'hosts': {h: {'cpu_percent': cpu}
                          for h, cpu in hosts.items()},
                'instances': instances}
        tmp = self.metrics_file + '.tmp'
        with open(tmp, 'w') as handle:
            json.dump(data, handle)
        os.replace(tmp, self.metrics_file)

    def rebalance(self) -> dict:
        return self.scheduler_service.manager.run_rebalance(
            nova_context.get_admin_context())

    def finish(self, record: dict, timeout: float = 60) -> dict:
        """Wait for the moves the record started; the completed record."""
        rebalancer = self.scheduler_service.manager.rebalancer
        started = {m['instance'] for m in record['moves']
                   if m['outcome']['status'] == 'started'}
        deadline = time.monotonic() + timeout
        while started and time.monotonic() < deadline:
            for uuid in list(started):
                migrations = objects.MigrationList.get_by_filters(
                    nova_context.get_admin_context(),
                    {'instance_uuid': uuid,
                     'migration_type': 'live-migration'})
                if any(m.status in ('completed', 'error', 'failed')
                       for m in migrations):
                    started.discard(uuid)
            time.sleep(0.05)
        rebalancer.outcomes.collect()
        stored = rebalancer.store.get(record['id'])
        # The stored record keeps only the hosts over their threshold.
        return dict(record, moves=stored['moves']) if stored else record

    def hosts_of(self) -> dict:
        """``{server uuid: host}`` as Nova sees it now."""
        servers = self.admin_api.get_servers(detail=True)
        return {s['id']: s['OS-EXT-SRV-ATTR:host'] for s in servers}


def run(story, drs: dict) -> None:
    """Run ``story(cloud)`` inside the cloud; re-raise its failure."""
    DemoCloud.story = staticmethod(story)
    DemoCloud.drs = drs
    result = unittest.TestResult()
    # Its shutdown chatter comes after Nova's logging fixture is gone.
    logging.getLogger('nova.thread_pool_factory').setLevel(logging.WARNING)
    DemoCloud('runTest').run(result)
    # Nova's logging fixture leaves a root handler at DEBUG behind; the
    # demo's own output is all the user should see from here on.
    logging.root.handlers.clear()
    logging.root.setLevel(logging.WARNING)
    problems = result.errors + result.failures
    if problems:
        raise CloudFailedError(problems[0][1])


class CloudFailedError(RuntimeError):
    """The demo's test case failed; ``detail`` is its report's tail."""

    def __init__(self, report: str):
        # The report carries the captured Nova log; its tail has the
        # traceback that matters, and its last exception line the cause.
        self.detail = '\n'.join(report.splitlines()[-25:])
        causes = [line.strip() for line in report.splitlines()
                  if _EXCEPTION_LINE.match(line.strip())]
        super().__init__(causes[-1] if causes else 'see --debug')


#: ``pkg.module.SomeError: message``, as a traceback ends.
_EXCEPTION_LINE = re.compile(r'^([a-z_]\w*\.)*[A-Z]\w*: ')
