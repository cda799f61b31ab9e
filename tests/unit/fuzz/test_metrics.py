"""Compute-node metrics as Nova stores them, through our readers.

``ComputeNode.metrics`` is a JSON string that Nova's HostState turns into
a MonitorMetricList with ``MonitorMetricList.from_json``; whatever Nova
accepts there, our utilization reader, filter and weigher must handle
without raising and without producing a value outside 0-100.
"""

import json
import math

import hypothesis
from hypothesis import strategies as st
from nova import objects
from nova.objects import fields

from nova_drs_scheduler import utilization
from nova_drs_scheduler.filters import utilization as util_filter
from nova_drs_scheduler.weighers import utilization as util_weigher
from tests.unit import fakes
from tests.unit.fuzz import base

METRIC = st.fixed_dictionaries(
    {'name': st.sampled_from(fields.MonitorMetricType.ALL)},
    optional={
        'value': st.one_of(st.integers(), st.floats(), st.text(max_size=5)),
        'timestamp': st.one_of(
            st.datetimes().map(lambda d: d.isoformat() + 'Z'),
            st.text(max_size=8), st.integers()),
        'source': st.text(max_size=8)})
METRICS_JSON = st.one_of(st.lists(METRIC, max_size=4).map(json.dumps),
                         base.JSON.map(json.dumps))


def parsed_by_nova(raw: str):
    """What HostState._update_from_compute_node would hold, or None when
    Nova itself refuses the row before any code of ours runs."""
    try:
        return objects.MonitorMetricList.from_json(raw)
    except (ValueError, TypeError, KeyError, AttributeError,
            OverflowError):
        return None


class MetricsFuzzTest(base.FuzzTestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.filter = util_filter.UtilizationFilter()
        self.weigher = util_weigher.UtilizationWeigher()

    def _check_host(self, metrics):
        state = fakes.host(metrics=metrics)
        cpu = utilization.host_cpu_percent(state, max_age=180)
        self.assertTrue(cpu is None or 0 <= cpu <= 100, cpu)
        self.assertIsInstance(
            self.filter.host_passes(state, fakes.spec()), bool)
        weight = self.weigher._weigh_object(state, fakes.spec(vcpus=2))
        self.assertTrue(math.isfinite(weight), weight)

    @base.FUZZ
    @hypothesis.given(METRICS_JSON)
    def test_metrics_json_nova_accepts(self, raw):
        metrics = parsed_by_nova(raw)
        hypothesis.assume(metrics is not None)
        self._check_host(metrics)

    @base.FUZZ
    @hypothesis.given(base.JSON)
    def test_metrics_attribute_of_any_shape(self, metrics):
        # A third-party host manager could leave anything there.
        self._check_host(metrics)
