"""Our filter and weight handlers against Nova's, on the same input.

The handlers exist only to be faster; anything they return differently
from Nova's is a bug. Hypothesis draws hosts, aggregates (with valid,
invalid and conflicting multipliers), server groups and request kinds;
each example runs both handlers and compares hosts, order and weights.
"""

import logging
from unittest import mock

import fixtures
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from nova import objects
from nova import test
from nova.scheduler import filters as nova_filters
from nova.scheduler import weights as nova_weights
from nova.scheduler.filters import compute_filter
from nova.tests.unit.scheduler import fakes
from oslo_utils import timeutils
from oslo_utils.fixture import uuidsentinel as uuids

from nova_drs_scheduler.host_manager import filtering
from nova_drs_scheduler.host_manager import weighing
from nova_drs_scheduler.weighers import utilization

MULTIPLIER_KEYS = ('ram_weight_multiplier', 'cpu_weight_multiplier',
                   'io_ops_weight_multiplier', 'metrics_weight_multiplier',
                   'num_instances_weight_multiplier',
                   'soft_anti_affinity_weight_multiplier',
                   utilization.AGGREGATE_MULTIPLIER_KEY)
MULTIPLIER_VALUES = ('2.0', '-1.5', '0', 'fast', '1e3')


def aggregates():
    metadata = st.dictionaries(st.sampled_from(MULTIPLIER_KEYS),
                               st.sampled_from(MULTIPLIER_VALUES),
                               max_size=3)
    return st.lists(metadata, max_size=4).map(lambda metas: [
        objects.Aggregate(id=i, name=f'agg{i}', hosts=[], metadata=meta)
        for i, meta in enumerate(metas)])


host_values = st.fixed_dictionaries({
    'free_ram_mb': st.integers(-2048, 65536),
    'vcpus_used': st.integers(0, 64),
    'free_disk_mb': st.integers(0, 10 ** 6),
    'num_io_ops': st.integers(0, 8),
    'num_instances': st.integers(0, 40),
    'failed_builds': st.integers(0, 3),
    'hypervisor_version': st.sampled_from([8000000, 9000000]),
    'cpu_percent': st.floats(0.0, 1.0),
    'members': st.integers(0, 3),
    'aggregate_picks': st.lists(st.integers(0, 3), max_size=3),
    'service_disabled': st.booleans(),
    'service_down': st.booleans(),
})


def plain(**values):
    """One host's values for ``host_states``: an idle, unaggregated host."""
    return dict(dict(free_ram_mb=0, vcpus_used=0, free_disk_mb=0,
                     num_io_ops=0, num_instances=0, failed_builds=0,
                     hypervisor_version=1, cpu_percent=0.1, members=0,
                     aggregate_picks=[], service_disabled=False), **values)


def service(value):
    seen = timeutils.utcnow()
    if value.get('service_down'):
        seen = seen.replace(year=seen.year - 1)
    return {'disabled': value['service_disabled'], 'forced_down': False,
            'last_seen_up': seen, 'created_at': seen, 'updated_at': seen,
            'host': 'h', 'binary': 'nova-compute'}


def host_states(values, aggs):
    hosts = []
    for i, value in enumerate(values):
        metrics = objects.MonitorMetricList(objects=[objects.MonitorMetric(
            name='cpu.percent', value=value['cpu_percent'], source='virt')])
        picked = [aggs[p] for p in value['aggregate_picks'] if p < len(aggs)]
        hosts.append(fakes.FakeHostState(f'host{i}', f'node{i}', {
            'free_ram_mb': value['free_ram_mb'],
            'total_usable_ram_mb': 65536, 'ram_allocation_ratio': 1.0,
            'vcpus_total': 64, 'vcpus_used': value['vcpus_used'],
            'cpu_allocation_ratio': 4.0,
            'free_disk_mb': value['free_disk_mb'],
            'total_usable_disk_gb': 1000, 'disk_allocation_ratio': 1.0,
            'num_io_ops': value['num_io_ops'],
            'num_instances': value['num_instances'],
            'failed_builds': value['failed_builds'],
            'hypervisor_version': value['hypervisor_version'],
            'metrics': metrics, 'aggregates': picked, 'pci_stats': None,
            'uuid': f'uuid{i}', 'cell_uuid': 'cell1',
            'service': service(value),
        }, instances=[objects.Instance(uuid=getattr(uuids, f'member{m}'))
                      for m in range(value['members'])]))
    return hosts


def request(policy=None, rebuild=False):
    group = objects.InstanceGroup(
        policy=policy,
        members=[uuids.member0, uuids.member1]) if policy else None
    hints = {'_nova_check_type': ['rebuild']} if rebuild else {}
    return objects.RequestSpec(instance_group=group, scheduler_hints=hints,
                               instance_uuid=uuids.new, flavor=objects.Flavor(
                                   vcpus=2, memory_mb=2048, root_gb=20,
                                   ephemeral_gb=0, extra_specs={}))


class WeightHandlerTest(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        self.flags(weight_setting=['cpu.percent=-1.0'], group='metrics')
        self.flags(num_instances_weight_multiplier=-0.5,
                   group='filter_scheduler')
        nova_handler = nova_weights.HostWeightHandler()
        self.weighers = [cls() for cls in nova_handler.get_matching_classes(
            ['nova.scheduler.weights.all_weighers',
             'nova_drs_scheduler.weighers.utilization.UtilizationWeigher'])]
        self.nova = nova_handler
        self.ours = weighing.WeightHandler()

    def assertSameWeighing(self, hosts, spec):
        expected = self.nova.get_weighed_objects(self.weighers, hosts, spec)
        actual = self.ours.get_weighed_objects(self.weighers, hosts, spec)
        self.assertEqual([(w.obj.host, w.weight) for w in expected],
                         [(w.obj.host, w.weight) for w in actual])
        self.assertEqual([type(w) for w in expected],
                         [type(w) for w in actual])

    @settings(max_examples=60, deadline=None)
    @given(st.lists(host_values, max_size=12), aggregates(),
           st.sampled_from([None, 'soft-affinity', 'soft-anti-affinity']))
    def test_same_weights_and_order_as_nova(self, values, aggs, policy):
        self.assertSameWeighing(host_states(values, aggs), request(policy))

    def test_same_result_with_debug_logging(self):
        self.useFixture(fixtures.FakeLogger(level=logging.DEBUG))
        aggs = [objects.Aggregate(id=1, hosts=[],
                                  metadata={'ram_weight_multiplier': '3'})]
        values = [plain(free_ram_mb=ram, vcpus_used=4, num_instances=1,
                        aggregate_picks=[0] if ram > 1000 else [])
                  for ram in (512, 4096, 2048)]
        self.assertSameWeighing(host_states(values, aggs), request())

    def test_multiplier_asked_once_per_aggregate_set(self):
        calls = []

        class Counting(nova_weights.ram.RAMWeigher):
            def weight_multiplier(self, host_state):
                calls.append(host_state.host)
                return super().weight_multiplier(host_state)

        # Defined here, not in a module known to keep the contract.
        self.assertFalse(weighing.aggregate_scoped(Counting()))
        hosts = host_states([plain(free_ram_mb=i) for i in range(5)], [])
        self.ours.get_weighed_objects([Counting()], hosts, request())
        self.assertEqual(5, len(calls))
        ram = nova_weights.ram.RAMWeigher()
        self.assertTrue(weighing.aggregate_scoped(ram))
        counted = self.useFixture(fixtures.MockPatchObject(
            ram, 'weight_multiplier', return_value=1.0)).mock
        self.ours.get_weighed_objects([ram], hosts, request())
        self.assertEqual(1, counted.call_count)


    def weigh_logged(self, handler, weighers, hosts, name=None):
        """(host, weight) pairs in order, and the lines logged at DEBUG
        to the logger ``name`` (the root logger by default), each with
        the name of the logger that logged it."""
        logger = self.useFixture(fixtures.FakeLogger(
            name=name, level=logging.DEBUG,
            format='%(levelname)s %(name)s %(message)s'))
        weighed = handler.get_weighed_objects(weighers, hosts, request())
        return [(w.obj.host, w.weight) for w in weighed], logger.output

    def test_debug_lines_only_when_nova_weights_logs_debug(self):
        hosts = host_states([plain(free_ram_mb=ram) for ram in (512, 4096)],
                            [])
        # Debug on for nova.weights alone: Nova's lines, from its logger.
        self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        _, lines = self.weigh_logged(self.ours, self.weighers, hosts,
                                     name='nova.weights')
        self.assertIn('DEBUG nova.weights RAMWeigher: raw weights', lines)
        # Debug off for it: no line, and no weight formatted for one.
        self.useFixture(fixtures.FakeLogger(
            name='nova.weights', level=logging.INFO))
        with mock.patch.object(weighing, '_log_weigher') as log_weigher:
            self.ours.get_weighed_objects(self.weighers, hosts, request())
        log_weigher.assert_not_called()

    def test_same_debug_lines_as_nova(self):
        aggs = [objects.Aggregate(id=1, hosts=[],
                                  metadata={'ram_weight_multiplier': '3'})]
        hosts = host_states([plain(free_ram_mb=ram, aggregate_picks=picks)
                             for ram, picks in ((512, []), (4096, [0]))],
                            aggs)
        expected = self.weigh_logged(self.nova, self.weighers, hosts)
        self.assertIn('RAMWeigher: raw weights', expected[1])
        self.assertEqual(expected,
                         self.weigh_logged(self.ours, self.weighers, hosts))

    def test_a_short_weight_list_like_nova(self):
        class Short(nova_weights.BaseHostWeigher):
            """Weighs all hosts but the last two: a broken plug-in Nova
            tolerates (its weights go to the first hosts)."""

            def _weigh_object(self, host_state, weight_properties):
                raise AssertionError('not called')

            def weigh_objects(self, weighed_obj_list, weight_properties):
                return [float(i) for i in range(len(weighed_obj_list) - 2)]

        hosts = host_states([plain()] * 4, [])
        expected = self.weigh_logged(self.nova, [Short()], hosts)
        self.assertEqual([('host1', 1.0), ('host0', 0.0), ('host2', 0.0),
                          ('host3', 0.0)], expected[0])
        self.assertEqual(expected,
                         self.weigh_logged(self.ours, [Short()], hosts))

    def test_two_hosts_are_weighed(self):
        hosts = host_states([plain(free_ram_mb=512),
                             plain(free_ram_mb=4096)], [])
        self.assertSameWeighing(hosts, request())
        weighed = self.ours.get_weighed_objects(self.weighers, hosts,
                                                request())
        self.assertEqual(['host1', 'host0'], [w.obj.host for w in weighed])

    def test_no_weigher_asked_for_one_host_or_none(self):
        weigher = mock.Mock(spec=nova_weights.ram.RAMWeigher)
        self.assertEqual(
            [], self.ours.get_weighed_objects([weigher], [], request()))
        [host] = host_states([plain()], [])
        [weighed] = self.ours.get_weighed_objects([weigher], [host],
                                                  request())
        self.assertEqual((host, 0.0), (weighed.obj, weighed.weight))
        weigher.weigh_objects.assert_not_called()

    def test_scoped_by_the_module_defining_the_multiplier(self):
        def scoped(*parts):
            def weight_multiplier(self, host_state):
                return 1.0

            # Built at run time, as a module's __name__ is.
            weight_multiplier.__module__ = '.'.join(parts)
            weigher = type('Weigher', (),
                           {'weight_multiplier': weight_multiplier})
            return weighing.aggregate_scoped(weigher())

        self.assertTrue(scoped('nova', 'weights'))
        self.assertTrue(scoped('nova', 'scheduler', 'weights', 'ram'))
        self.assertTrue(scoped('nova_drs_scheduler', 'weighers', 'x'))
        for outside in (('acme', 'weighers'), ('nova',), ('nova', 'api'),
                        ('nova', 'weightsx'), ('nova_drs_scheduler',)):
            self.assertFalse(scoped(*outside), outside)


class OddHostsFilter(nova_filters.BaseHostFilter):
    """Rejects odd hosts; skipped on rebuild, like most filters."""

    def host_passes(self, host_state, spec_obj):
        return int(host_state.host[4:]) % 2 == 0


class RebuildFilter(nova_filters.BaseHostFilter):
    """Rejects hosts divisible by three, rebuild or not."""

    RUN_ON_REBUILD = True

    def host_passes(self, host_state, spec_obj):
        return int(host_state.host[4:]) % 3 != 0


class FirstOnlyFilter(nova_filters.BaseHostFilter):
    """Runs for the first instance only and rejects host1."""

    run_filter_once_per_request = True

    def host_passes(self, host_state, spec_obj):
        return host_state.host != 'host1'


class WholeListFilter(nova_filters.BaseHostFilter):
    """Overrides filter_all: keeps the last half of the list."""

    def filter_all(self, filter_obj_list, spec_obj):
        hosts = list(filter_obj_list)
        return iter(hosts[len(hosts) // 2:])


class StopFilter(nova_filters.BaseHostFilter):
    """filter_all returns None: stop filtering."""

    def filter_all(self, filter_obj_list, spec_obj):
        return None


class RejectAllFilter(nova_filters.BaseHostFilter):
    """Rejects every host."""

    def host_passes(self, host_state, spec_obj):
        return False


class OneByOneFilter(nova_filters.BaseHostFilter):
    """Overrides _filter_one only: rejects host2 there, in no other way."""

    def _filter_one(self, obj, spec_obj):
        return obj.host != 'host2'

    def host_passes(self, host_state, spec_obj):
        return True


class FilterHandlerTest(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        self.nova = nova_filters.HostFilterHandler()
        self.ours = filtering.FilterHandler()

    @settings(max_examples=80, deadline=None)
    @given(st.lists(host_values, max_size=12),
           st.lists(st.sampled_from([OddHostsFilter, RebuildFilter,
                                     FirstOnlyFilter, WholeListFilter,
                                     StopFilter]), max_size=4),
           st.booleans(), st.integers(0, 2), st.booleans())
    def test_same_hosts_as_nova(self, values, classes, rebuild, index,
                                with_compute_filter):
        chosen = [cls() for cls in classes]
        if with_compute_filter:
            chosen.insert(0, compute_filter.ComputeFilter())
        hosts = host_states(values, [])
        spec = request(rebuild=rebuild)
        expected = self.nova.get_filtered_objects(chosen, hosts, spec, index)
        actual = self.ours.get_filtered_objects(chosen, hosts, spec, index)
        if expected is None:
            self.assertIsNone(actual)
        else:
            self.assertEqual([h.host for h in expected],
                             [h.host for h in actual])

    def test_all_removed_logs_each_filter_count(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        hosts = host_states([plain(), plain()], [])
        hosts[0].host, hosts[1].host = 'host1', 'host3'
        result = self.ours.get_filtered_objects([OddHostsFilter()], hosts,
                                                request())
        self.assertEqual([], result)
        self.assertIn('Filter OddHostsFilter returned 0 hosts',
                      logger.output)
        self.assertIn("Filter results: ['OddHostsFilter: (start: 2, end: "
                      "0)']", logger.output)

    def filter_logged(self, handler, filters, *index):
        """Hosts left of four plain ones, and the lines logged at DEBUG."""
        logger = self.useFixture(fixtures.FakeLogger(
            level=logging.DEBUG, format='%(levelname)s %(message)s'))
        hosts = host_states([plain()] * 4, [])
        result = handler.get_filtered_objects(filters, hosts, request(),
                                              *index)
        return result and [h.host for h in result], logger.output

    def test_same_debug_lines_as_nova_when_all_are_removed(self):
        filters = [OddHostsFilter(), RebuildFilter(), RejectAllFilter(),
                   OddHostsFilter()]
        expected = self.filter_logged(self.nova, filters)
        # The hosts that passed each filter, named at debug level only.
        self.assertIn("[('OddHostsFilter', [('host0', 'node0'), "
                      "('host2', 'node2')]), ('RebuildFilter', "
                      "[('host2', 'node2')]), ('RejectAllFilter', None)]",
                      expected[1])
        self.assertEqual(expected, self.filter_logged(self.ours, filters))

    def test_first_instance_by_default(self):
        expected = self.filter_logged(self.nova, [FirstOnlyFilter()])
        self.assertEqual(['host0', 'host2', 'host3'], expected[0])
        self.assertEqual(expected,
                         self.filter_logged(self.ours, [FirstOnlyFilter()]))

    def test_a_filter_overriding_filter_one_is_asked_through_it(self):
        self.assertEqual(
            (['host0', 'host1', 'host3'], ['host0', 'host1', 'host3']),
            (self.filter_logged(self.nova, [OneByOneFilter()])[0],
             self.filter_logged(self.ours, [OneByOneFilter()])[0]))

    def test_same_debug_lines_as_nova_when_told_to_stop(self):
        filters = [OddHostsFilter(), StopFilter(), OddHostsFilter()]
        expected = self.filter_logged(self.nova, filters)
        self.assertEqual((None, True), (
            expected[0], 'Filter StopFilter says to stop' in expected[1]))
        self.assertEqual(expected, self.filter_logged(self.ours, filters))

    def test_host_passes_asked_without_nova_per_host_dispatch(self):
        # What the handler is for: a filter that keeps Nova's filter_all
        # and _filter_one has host_passes called directly.
        asked = []
        original = nova_filters.BaseHostFilter._filter_one

        def filter_one(self, obj, spec):
            asked.append(obj.host)
            return original(self, obj, spec)

        self.useFixture(fixtures.MockPatchObject(
            nova_filters.BaseHostFilter, '_filter_one', filter_one))
        self.assertEqual(['host0', 'host2'], self.filter_logged(
            self.ours, [OddHostsFilter()])[0])
        self.assertEqual([], asked)
        self.assertEqual(['host0', 'host2'], self.filter_logged(
            self.nova, [OddHostsFilter()])[0])
        self.assertEqual(['host0', 'host1', 'host2', 'host3'], asked)
