"""Aggregate metadata values, typed by hand by operators, never crash.

Every filter, the weigher's per-aggregate multiplier and the rebalancer's
per-host settings either use a value or ignore it with a log line.
"""

import math

import hypothesis
from hypothesis import strategies as st
from nova import objects

from nova_drs_scheduler.filters import core
from nova_drs_scheduler.filters import disk
from nova_drs_scheduler.filters import pool
from nova_drs_scheduler.filters import ram
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import aggregate_settings
from nova_drs_scheduler.weighers import utilization as util_weigher
from tests.unit import fakes
from tests.unit.fuzz import base

CAPACITY_FILTERS = (core.AggregateCoreFilter, ram.AggregateRamFilter,
                    disk.AggregateDiskFilter)
KEYS = ('cpu_allocation_ratio', 'ram_allocation_ratio',
        'disk_allocation_ratio', util_weigher.AGGREGATE_MULTIPLIER_KEY,
        'drs_cpu_threshold', 'drs_ram_threshold', 'drs_mode', 'drs_exclude',
        'drs_enabled', 'gen')
METADATA = st.lists(st.dictionaries(st.sampled_from(KEYS), base.NUMBERISH,
                                    max_size=len(KEYS)),
                    min_size=1, max_size=3)
CONFIG = model.PlannerConfig(cpu_threshold=80.0, ram_threshold=90.0)


def aggregates(metadata):
    return [objects.Aggregate(id=index, name=f'agg{index}', hosts=['host1'],
                              metadata=md)
            for index, md in enumerate(metadata)]


class AggregateMetadataFuzzTest(base.FuzzTestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()

    def _state(self, metadata):
        state = fakes.host()
        state.aggregates = aggregates(metadata)
        return state

    @base.FUZZ
    @hypothesis.given(METADATA)
    def test_capacity_filters_and_weigher_multiplier(self, metadata):
        for cls in CAPACITY_FILTERS:
            state = self._state(metadata)
            self.assertIsInstance(
                cls().host_passes(state, fakes.spec()), bool)
            for limit in state.limits.values():
                self.assertTrue(math.isfinite(limit) and limit > 0, limit)
        multiplier = util_weigher.UtilizationWeigher().weight_multiplier(
            self._state(metadata))
        self.assertTrue(math.isfinite(multiplier), multiplier)

    @base.FUZZ
    @hypothesis.given(METADATA, base.NUMBERISH)
    def test_pool_filter(self, metadata, requirement):
        spec = fakes.spec(extra_specs={f'{pool.SCOPE}:gen': requirement})
        self.assertIsInstance(pool.DRSPoolFilter().host_passes(
            self._state(metadata), spec), bool)

    @base.FUZZ
    @hypothesis.given(METADATA)
    def test_rebalancer_host_settings(self, metadata):
        settings = aggregate_settings.host_settings(
            'host1', aggregates(metadata), CONFIG)
        self.assertIn(settings.mode, aggregate_settings.MODES)
        for threshold in (settings.cpu_threshold, settings.ram_threshold):
            self.assertTrue(0 <= threshold <= 100, threshold)
        self.assertIsInstance(settings.excluded, bool)
