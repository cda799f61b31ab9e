"""Builders of HostStates, aggregates, metrics and RequestSpecs for tests."""

import datetime

import fixtures
import testtools
from nova import objects
from nova.tests.unit.scheduler import fakes
from oslo_config import fixture as config_fixture
from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler import log_once


def host(name='host1', aggregates=None, cpu=None, cpu_age=0, **attrs):
    """A FakeHostState; ``cpu`` sets a cpu.percent sample ``cpu_age`` s old."""
    defaults = {
        'vcpus_total': 4, 'vcpus_used': 0, 'cpu_allocation_ratio': 1.0,
        'total_usable_ram_mb': 4096, 'free_ram_mb': 4096,
        'ram_allocation_ratio': 1.0,
        'total_usable_disk_gb': 100, 'free_disk_mb': 100 * 1024,
        'disk_allocation_ratio': 1.0,
        'limits': {},
        'aggregates': [aggregate(md) for md in aggregates or ()],
        'metrics': metrics(cpu, cpu_age) if cpu is not None else None,
    }
    defaults.update(attrs)
    return fakes.FakeHostState(name, name, defaults)


def aggregate(metadata):
    return objects.Aggregate(id=1, name='agg', hosts=[], metadata=metadata)


def metrics(value, age=0, name='cpu.percent'):
    timestamp = timeutils.utcnow(with_timezone=True) - \
        datetime.timedelta(seconds=age)
    return objects.MonitorMetricList(objects=[objects.MonitorMetric(
        name=name, value=value, timestamp=timestamp, source='test')])


def spec(vcpus=1, memory_mb=512, root_gb=1, ephemeral_gb=0, swap=0,
         extra_specs=None, is_bfv=None):
    flavor = objects.Flavor(vcpus=vcpus, memory_mb=memory_mb,
                            root_gb=root_gb, ephemeral_gb=ephemeral_gb,
                            swap=swap, extra_specs=extra_specs or {})
    request = objects.RequestSpec(flavor=flavor)
    if is_bfv is not None:
        request.is_bfv = is_bfv
    return request


def forget_logged():
    """Let each test see its own log-once warnings."""
    log_once.reset()


class LeanTestCase(testtools.TestCase):
    """Nova's ``flags()``, captured logs and a fresh log-once memory.

    Nova's NoDBTestCase costs about 0.3 s of set-up per test; the filter
    and weigher tests need none of it, and mutation testing runs them
    once per mutant.
    """

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.FakeLogger())
        self._conf = self.useFixture(config_fixture.Config(conf.CONF))
        forget_logged()

    def flags(self, group=None, **overrides):
        self._conf.config(group=group, **overrides)
