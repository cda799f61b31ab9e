"""The static metric source's file: any content gives usable samples or a
ValueError naming the option, which skips the period."""

import json
import math
import types

import fixtures
import hypothesis
from hypothesis import strategies as st

from nova_drs_scheduler import conf
from nova_drs_scheduler.rebalance import sources
from tests.unit.fuzz import base

HOSTS = ['h1', 'h2']
UUIDS = ['u1', 'u2']
ENTRY = st.one_of(
    base.JSON,
    st.fixed_dictionaries({}, optional={
        'cpu_percent': base.JSON, 'ram_percent': base.JSON,
        'timestamp': base.JSON}))
#: Shaped like the documented file often enough to reach every field.
DOCUMENT = st.fixed_dictionaries({}, optional={
    'timestamp': base.JSON,
    'hosts': st.one_of(base.JSON, st.dictionaries(st.sampled_from(HOSTS),
                                                  ENTRY)),
    'instances': st.one_of(base.JSON, st.dictionaries(
        st.sampled_from(UUIDS), base.JSON))})
CONTENT = st.one_of(st.binary(max_size=100),
                    st.one_of(DOCUMENT, base.JSON).map(
                        lambda doc: json.dumps(doc).encode()))


def _percent_or_none(value):
    return value is None or (math.isfinite(value) and 0 <= value <= 100)


class StaticSourceFuzzTest(base.FuzzTestCase):

    def setUp(self):
        super().setUp()
        self.path = self.useFixture(fixtures.TempDir()).join('metrics.json')
        self.flags(metrics_source='static', static_metrics_file=self.path,
                   group='drs')
        self.source = sources.load(conf.CONF)

    @base.FUZZ
    @hypothesis.given(CONTENT)
    def test_any_file(self, content):
        with open(self.path, 'wb') as handle:
            handle.write(content)
        instances = [types.SimpleNamespace(uuid=u, vcpus=2) for u in UUIDS]
        try:
            samples = self.source.host_samples(None, HOSTS)
            loads = self.source.instance_loads(None, instances)
        except ValueError as error:
            self.assertIn('[drs] static_metrics_file', str(error))
            return
        for sample in samples.values():
            self.assertTrue(math.isfinite(sample.timestamp), sample)
            self.assertTrue(_percent_or_none(sample.cpu_percent) and
                            sample.cpu_percent is not None, sample)
            self.assertTrue(_percent_or_none(sample.ram_percent), sample)
        for cores in loads.values():
            self.assertTrue(math.isfinite(cores) and cores >= 0, cores)
