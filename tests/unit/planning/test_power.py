"""Power management's pure decisions: standby, wake, cancel."""

import dataclasses
import random

import fixtures
import hypothesis
import testtools
from hypothesis import strategies as st
from oslo_config import cfg

from nova_drs_scheduler import conf
from nova_drs_scheduler.planning import forecast
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import outlook
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import power
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.goals import consolidate
from tests import snapshots as h

AUTO = 'automatic'
CONFIG = power.PowerConfig(band_low=45.0, band_high=81.0, reserve_hosts=0,
                           min_hosts=1, low_periods=3, boot_seconds=600.0,
                           forecast_deviations=1.0, period_seconds=300.0)


def host(name, cpu, vcpus=10, level=AUTO, cpu_threshold=86.0, **kwargs):
    """A host whose threshold less the default margin (5) is the band's
    top (81): the tests of the band read the band; those of the per-host
    ceiling set their thresholds."""
    return h.host(name, cpu, vcpus=vcpus, memory_mb=10240,
                  power_level=level, cpu_threshold=cpu_threshold, **kwargs)


def snap(hosts, instances=(), **config):
    return h.snapshot(hosts, instances, **config)


def steady(pools_demand, samples=4, step=300.0):
    """Outlooks of a flat demand (cores) per pool."""
    found = {}
    for pool, demand in pools_demand.items():
        state = outlook.Outlook()
        for n in range(samples):
            state = outlook.update(state, n * step, demand)
        found[pool] = state
    return found


def plan(snapshot, forecasts=None, counters=None, config=CONFIG,
         candidates=h.allow_all, unplaced=frozenset()):
    """``forecasts``: outlooks, or Holt's states (each put in an outlook
    with no shape)."""
    outlooks = {pool: state if isinstance(state, outlook.Outlook)
                else outlook.Outlook(holt=state)
                for pool, state in (forecasts or {}).items()}
    return power.plan(snapshot, candidates, outlooks,
                      counters if counters is not None else {None: 10},
                      config, unplaced)


def first(result, *fields):
    """The first host a plan sheds (with ``fields`` of its action): the
    cheapest to empty, whatever others follow it in the same step."""
    return [(a.host, *(getattr(a, f) for f in fields)) if fields else a.host
            for a in result.actions][:1]


class CountTest(testtools.TestCase):

    def counted(self, cpus, previous=2, **config):
        snapshot = snap([host(f'h{n}', cpu) for n, cpu in enumerate(cpus)])
        _, counters = power.observe(snapshot, {}, {None: previous}, 0.0,
                                    dataclasses.replace(CONFIG, **config))
        return counters[None]

    def test_counts_periods_with_a_host_to_spare(self):
        # 12 cores: two hosts of 10 hold them under the middle (63 %),
        # the third is to spare.
        self.assertEqual(3, self.counted([40.0, 40.0, 40.0]))
        # 12.9 are over two hosts' middle: none to spare.
        self.assertEqual(0, self.counted([43.0, 43.0, 43.0]))
        self.assertEqual(1, self.counted([0.0, 0.0], previous=0))
        # The reserve and the minimum are kept.
        self.assertEqual(0, self.counted([10.0, 10.0], reserve_hosts=1))
        self.assertEqual(0, self.counted([10.0, 10.0], min_hosts=2))
        self.assertEqual(3, self.counted([10.0, 10.0, 10.0], min_hosts=2))
        # Unmeasured: nothing to spare.
        self.assertEqual(0, self.counted([None, None]))

    def test_the_band_middle(self):
        self.assertEqual(63.0, CONFIG.target)
        self.assertEqual(65.5, power.PowerConfig(band_low=50.0).target)
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, CONFIG,
                          'band_low', 1.0)


class ObserveTest(testtools.TestCase):

    def test_demand_in_cores_with_unmeasured_hosts_at_the_mean(self):
        snapshot = snap([
            host('a', 20.0), host('b', 40.0, vcpus=20), host('c', None),
            host('d', None, power=model.STANDBY),
            host('x', 90.0, excluded=True)])
        forecasts, counters = power.observe(snapshot, {}, {}, 100.0, CONFIG)
        # 2 + 8 cores on 30 measured vCPUs, c's 10 at that mean.
        state = forecasts[None].holt
        self.assertAlmostEqual(10.0 * 40 / 30, state.level)
        self.assertEqual((100.0, 1), (state.time, state.samples))
        # 13.3 cores on the 40 vCPUs taking load: 33 %, under 45 %.
        self.assertEqual({None: 1}, counters)
        _, counters = power.observe(snapshot, forecasts, {None: 4}, 200.0,
                                    CONFIG)
        self.assertEqual({None: 5}, counters)

    def test_entering_hosts_load_counts_but_not_their_capacity(self):
        snapshot = snap([
            host('a', 30.0),
            host('b', 50.0, power=model.ENTERING, draining=True,
                 schedulable=False)])
        forecasts, counters = power.observe(snapshot, {}, {None: 2}, 0.0,
                                            CONFIG)
        self.assertAlmostEqual(8.0, forecasts[None].holt.level)
        # 8 cores on a's 10: 80 %, not under the band.
        self.assertEqual({None: 0}, counters)

    def test_pools_in_aggregate_mode_and_forgotten_pools(self):
        snapshot = snap([host('a', 10.0, pool='A'),
                         host('a2', 10.0, pool='A'),
                         host('b', 60.0, pool='B'), host('u', 10.0)],
                        mode=h.fresh('aggregate'))
        old = steady({'gone': 3.0})
        forecasts, counters = power.observe(snapshot, old, {'gone': 9},
                                            0.0, CONFIG)
        # Unaggregated hosts are ignored (unaggregated_hosts=ignore); the
        # pool gone keeps its daily shape only, for when it comes back.
        self.assertEqual({'A', 'B', 'gone'}, set(forecasts))
        self.assertEqual(outlook.Outlook(shape=old['gone'].shape),
                         forecasts['gone'])
        self.assertEqual({'A': 1, 'B': 0}, counters)
        fresh = dataclasses.replace(snapshot, config=dataclasses.replace(
            snapshot.config, unaggregated_hosts=h.fresh('ignore')))
        forecasts, _ = power.observe(fresh, {}, {}, 0.0, CONFIG)
        self.assertEqual({'A', 'B'}, set(forecasts))
        pooled = dataclasses.replace(snapshot, config=dataclasses.replace(
            snapshot.config, unaggregated_hosts='pool'))
        forecasts, _ = power.observe(pooled, {}, {}, 0.0, CONFIG)
        self.assertEqual({None, 'A', 'B'}, set(forecasts))

    def test_hosts_with_no_capacity_or_an_entering_one_take_no_load(self):
        snapshot = snap([
            host('a', 40.0), h.host('z', 90.0, vcpus=0, memory_mb=1024,
                                    power_level=AUTO),
            h.host('y', 90.0, vcpus=4, memory_mb=-1, power_level=AUTO),
            h.host('x', 90.0, vcpus=4, memory_mb=0, power_level=AUTO),
            h.host('w', 90.0, vcpus=-4, memory_mb=1024, power_level=AUTO),
            # Entering standby, even if a caller forgot the drain flag.
            host('e', 0.0, power=model.ENTERING)])
        forecasts, counters = power.observe(snapshot, {}, {None: 3}, 0.0,
                                            CONFIG)
        self.assertAlmostEqual(4.0, forecasts[None].holt.level)
        # 4 cores on a's 10: 40 %, and a alone has none to spare.
        self.assertEqual({None: 0}, counters)
        result = plan(snapshot, forecasts)
        self.assertEqual(('a',), result.pools[0].on)
        self.assertAlmostEqual(40.0, result.pools[0].utilization)

    def test_one_vcpu_is_a_capacity(self):
        snapshot = snap([h.host(n, 10.0, vcpus=1, memory_mb=1024,
                                power_level=AUTO) for n in 'ab'])
        _, counters = power.observe(snapshot, {}, {None: 3}, 0.0, CONFIG)
        self.assertEqual({None: 4}, counters)
        # A lone host of one vCPU: a utilization.
        lone = snap([h.host('a', 10.0, vcpus=1, memory_mb=1024,
                            power_level=AUTO)])
        self.assertEqual(10.0, plan(lone, steady({None: 0.1})).pools[0]
                         .utilization)

    def test_one_mb_is_a_capacity(self):
        snapshot = snap([h.host('a', 50.0, vcpus=10, memory_mb=1,
                                power_level=AUTO)])
        forecasts, _ = power.observe(snapshot, {}, {}, 0.0, CONFIG)
        self.assertEqual(5.0, forecasts[None].holt.level)

    def test_hosts_whose_instances_a_standby_needs(self):
        snapshot = snap([host('a', 10.0, pool='A'),
                         host('b', 10.0, pool='A', level='off'),
                         host('c', None, pool='A'),
                         host('d', 10.0, pool='B'),
                         host('s', 10.0, pool='A', power=model.STANDBY),
                         host('u', 10.0, pool='A', level='bogus'),
                         # Entering standby already, even if a caller
                         # forgot its drain flag.
                         host('e', 10.0, pool='A', power=model.ENTERING)],
                        mode='aggregate')
        for counters, wanted in (({'A': 3, 'B': 2}, {'a'}),
                                 ({'A': 4, 'B': 3}, {'a', 'd'}),
                                 ({'A': 2}, set())):
            self.assertEqual(wanted, power.needs_instances(
                snapshot, counters, CONFIG), counters)
        # A pool with no counter has counted no low period.
        config = dataclasses.replace(CONFIG, low_periods=1)
        self.assertEqual({'a'}, power.needs_instances(
            snapshot, {'A': 1}, config))

    def test_a_pool_with_no_measured_host_keeps_its_forecast(self):
        old = steady({None: 3.0})
        forecasts, counters = power.observe(
            snap([host('a', None)]), old, {None: 5}, 9999.0, CONFIG)
        self.assertIs(old[None], forecasts[None])
        self.assertEqual({None: 0}, counters)


class StandbyTest(testtools.TestCase):

    def quiet(self, extra=(), **kwargs):
        hosts = [host('a', 20.0), host('b', 10.0), host('c', 10.0),
                 *extra]
        instances = [h.instance('a1', 'a', 1.0, memory_mb=4096),
                     h.instance('a2', 'a', 1.0, memory_mb=4096),
                     h.instance('b1', 'b', 1.0, memory_mb=2048),
                     h.instance('c1', 'c', 1.0, memory_mb=3072)]
        return snap(hosts, instances, **kwargs)

    def test_gb_not_rounded_before_comparing(self):
        hosts = [host('a', 10.0), host('b', 10.0), host('c', 10.0)]
        instances = [h.instance('a1', 'a', 0.5, memory_mb=1000),
                     h.instance('b1', 'b', 0.5, memory_mb=900),
                     h.instance('c1', 'c', 0.5, memory_mb=1023)]
        result = plan(snap(hosts, instances), steady({None: 3.0}))
        self.assertEqual(['b'], first(result))

    def test_the_host_with_fewest_gb_to_move(self):
        result = plan(self.quiet(), steady({None: 4.0}))
        # 4 cores: one host holds them under the middle, two are to spare.
        action, then = result.actions
        self.assertEqual((power.STANDBY, 'b', None, 2.0),
                         (action.kind, action.host, action.pool, action.gb))
        self.assertEqual((power.STANDBY, 'c', 3.0), (then.kind, then.host,
                                                     then.gb))
        # The first has no other emptied with it.
        self.assertEqual('3 host(s) take load, the pool keeps 1 (forecast '
                         '13.3% in 900 s under the band\'s middle 63%, '
                         'reserve 0, minimum 1) for 10 periods; host b is the '
                         'cheapest to empty (2.0 GB to move)', action.reason)
        self.assertIn('host c is the cheapest to empty (3.0 GB to move) '
                      'with b emptied too', then.reason)
        [pool] = result.pools
        self.assertEqual(('a', 'b', 'c'), pool.on)
        self.assertEqual('3 host(s) take load, the pool keeps 1: host b, c '
                         'enter(s) standby; kept: a: 0 host(s) would be '
                         'left, the pool needs 1', pool.reason)
        self.assertAlmostEqual(40.0 / 3, pool.utilization)
        self.assertEqual(1, pool.needed)

    def test_never_a_host_with_an_instance_that_cannot_move(self):
        snapshot = self.quiet()

        def barring(*uuids):
            return dataclasses.replace(snapshot, instances=[
                dataclasses.replace(i, blocked='opted out')
                if i.uuid in uuids else i for i in snapshot.instances])
        result = plan(barring('b1'), steady({None: 4.0}))
        self.assertEqual(['c'], first(result))
        result = plan(barring('a2', 'b1', 'c1'), steady({None: 4.0}))
        self.assertEqual((), result.actions)
        self.assertEqual(
            '3 host(s) take load, the pool keeps 1, no standby: b: instance '
            'b1 opted out; c: instance c1 opted out; a: instance a2 opted '
            'out', result.pools[0].reason)

    def test_an_instance_busy_for_now_does_not_bar_its_host(self):
        snapshot = self.quiet()
        instances = [dataclasses.replace(i, blocked='migrating',
                                         transient=True)
                     if i.uuid == 'b1' else i for i in snapshot.instances]
        result = plan(dataclasses.replace(snapshot, instances=instances),
                      steady({None: 4.0}))
        self.assertEqual(['b'], first(result))

    def test_an_empty_host_goes_first(self):
        # Its state read from the database: equal to ON, not identical.
        result = plan(self.quiet(extra=[host('z', 0.0,
                                             power=h.fresh(model.ON))]),
                      steady({None: 4.0}))
        self.assertEqual([('z', 0.0)],
                         first(result, 'gb'))
        self.assertIn('z', result.pools[0].on)
        # An instance's host read from the database too.
        snapshot = self.quiet()
        instances = [dataclasses.replace(i, host=h.fresh(i.host))
                     for i in snapshot.instances]
        result = plan(dataclasses.replace(snapshot, instances=instances),
                      steady({None: 4.0}))
        self.assertEqual([('b', 2.0)],
                         first(result, 'gb'))

    def test_gb_to_move_rounded_to_the_megabyte(self):
        hosts = [host('a', 10.0), host('b', 10.0), host('c', 10.0)]
        result = plan(snap(hosts, [h.instance('a1', 'a', 0.5,
                                              memory_mb=1000),
                                   h.instance('b1', 'b', 0.5,
                                              memory_mb=2000),
                                   h.instance('c1', 'c', 0.5,
                                              memory_mb=3000)]),
                      steady({None: 3.0}))
        self.assertEqual([('a', 0.977)],
                         first(result, 'gb'))

    def test_destinations_stay_under_the_band_top(self):
        # b's 7 cores fit nowhere under 81 %: a and c are at 20 %.
        hosts = [host('a', 20.0), host('b', 70.0), host('c', 20.0),
                 host('d', 20.0)]
        instances = [h.instance('b1', 'b', 7.0, memory_mb=1024),
                     h.instance('a1', 'a', 2.0, memory_mb=2048),
                     h.instance('c1', 'c', 2.0, memory_mb=3072),
                     h.instance('d1', 'd', 2.0, memory_mb=4096)]
        result = plan(snap(hosts, instances), steady({None: 13.0}),
                      config=dataclasses.replace(CONFIG, band_low=50.0))
        self.assertEqual(['a'], first(result))
        # Nothing: two hosts hold the demand, but every host's instance
        # lands over the top.
        hosts = [host('a', 60.0), host('b', 60.0), host('c', 30.0)]
        instances = [h.instance('a1', 'a', 6.0), h.instance('b1', 'b', 6.0),
                     h.instance('c1', 'c', 3.0)]
        result = plan(snap(hosts, instances), steady({None: 15.0}),
                      config=dataclasses.replace(CONFIG, band_low=70.0))
        self.assertEqual((), result.actions)
        self.assertEqual(2, result.pools[0].needed)
        self.assertIn('a: instance a1 has no allowed destination in the '
                      'pool left under its threshold less the margin at the '
                      'forecast', result.pools[0].reason)

    def test_a_fraction_of_a_point_over_the_top_refuses(self):
        # a and c may take b's instance (their own level is off); a band
        # whose middle lets two hosts hold the pool's 15.6-15.7 cores
        # (a steady forecast of the demand now: no growth).
        config = dataclasses.replace(CONFIG, band_low=80.0)
        instances = [h.instance('b1', 'b', 0.55, memory_mb=1024)]
        for cpu, chosen in ((76.0, []), (75.4, ['b'])):
            hosts = [host('a', cpu, level='off'), host('b', 5.0),
                     host('c', cpu, level='off')]
            result = plan(snap(hosts, instances),
                          steady({None: 0.2 * cpu + 0.5}), config=config)
            self.assertEqual(chosen, first(result), cpu)
        # Exactly at the top is under it; a tenth over is not.
        instances = [h.instance('b1', 'b', 0.5, memory_mb=1024)]
        for cpu, chosen in ((76.0, ['b']), (76.05, []), (76.1, [])):
            hosts = [host('a', cpu, level='off'), host('b', 5.0),
                     host('c', cpu, level='off')]
            result = plan(snap(hosts, instances), steady({None: 15.7}),
                          config=config)
            self.assertEqual(chosen, first(result), cpu)

    def test_destinations_are_judged_at_their_outlook(self):
        # a is at 50 % now but usually at 78 %: b's 5 % would take it
        # over the top.
        instances = [h.instance('b1', 'b', 0.5, memory_mb=1024)]
        hosts = [host('a', 50.0, level='off', cpu_expected=78.0),
                 host('b', 5.0)]
        result = plan(snap(hosts, instances), steady({None: 5.5}))
        self.assertEqual((), result.actions)
        hosts[0] = host('a', 50.0, level='off', cpu_expected=40.0)
        result = plan(snap(hosts, instances), steady({None: 5.5}))
        self.assertEqual(['b'], first(result))

    def test_destinations_stay_under_their_ram_threshold(self):
        # b1 uses half of its 1 GB: the pool's memory in use fits a alone
        # either way, a's RAM with all of b1's does not at 80.1 %.
        instances = [h.instance('b1', 'b', 0.5, memory_mb=1024)]
        for ram, chosen in ((70.0, ['b']), (80.0, ['b']), (80.1, [])):
            hosts = [host('a', 20.0, ram=ram, level='off'),
                     host('b', 5.0, ram=5.0)]
            result = plan(snap(hosts, instances), steady({None: 2.5}))
            self.assertEqual(chosen, first(result), ram)
            self.assertEqual(1, result.pools[0].needed)
        # 1000 MB are 9.77 % of a's memory, not 9.
        hosts = [host('a', 20.0, ram=80.3, level='off'),
                 host('b', 5.0, ram=5.0)]
        result = plan(snap(hosts, [h.instance('b1', 'b', 0.5,
                                              memory_mb=1000)]),
                      steady({None: 2.5}))
        self.assertEqual((), result.actions)

    def test_all_instances_placed_together_under_the_top(self):
        # Each of b's instances fits on a alone, not both together.
        hosts = [host('a', 50.0), host('b', 40.0), host('c', 90.0,
                                                         level='off')]
        instances = [h.instance('b1', 'b', 2.0, memory_mb=1024),
                     h.instance('b2', 'b', 2.0, memory_mb=1024),
                     h.instance('a1', 'a', 5.0, memory_mb=8000),
                     h.instance('c1', 'c', 9.0, memory_mb=8000)]
        result = plan(snap(hosts, instances), steady({None: 18.0}),
                      config=dataclasses.replace(CONFIG, band_low=100.0,
                                                 band_high=80.0))
        self.assertEqual((), result.actions)

    def test_candidates_rails_are_followed(self):
        # Nova's filters allow b's instance nowhere but a, which is full.
        hosts = [host('a', 78.0), host('b', 5.0), host('c', 5.0)]
        instances = [h.instance('b1', 'b', 0.5, memory_mb=1024),
                     h.instance('c1', 'c', 0.5, memory_mb=2048),
                     h.instance('a1', 'a', 7.0, memory_mb=8192)]

        def only_a(instance, snapshot):
            return model.Candidates(allowed=['a'], rejected=[
                model.Rejection('c', 'AntiAffinityFilter')])
        result = plan(snap(hosts, instances), steady({None: 8.8}),
                      config=dataclasses.replace(CONFIG, band_low=50.0),
                      candidates=only_a)
        self.assertEqual((), result.actions)
        result = plan(snap(hosts, instances), steady({None: 8.8}),
                      config=dataclasses.replace(CONFIG, band_low=50.0))
        self.assertEqual(['b'], first(result))

    def test_never_back_to_itself_nor_to_a_host_off(self):
        hosts = [host('a', 10.0), host('b', 10.0), host('c', 10.0),
                 host('a0', None, power=model.STANDBY, schedulable=False)]
        instances = [h.instance(f'{n}1', n, 0.5, memory_mb=size)
                     for n, size in (('a', 1024), ('b', 2048), ('c', 4096))]

        def offer(*names):
            def candidates(instance, snapshot):
                return model.Candidates(allowed=[
                    h.fresh(n) if n != 'self' else h.fresh(instance.host)
                    for n in names])
            return candidates
        result = plan(snap(hosts, instances), steady({None: 3.0}),
                      candidates=offer('self'))
        self.assertEqual((), result.actions)
        result = plan(snap(hosts, instances), steady({None: 3.0}),
                      candidates=offer('a0', 'self', 'c'))
        self.assertEqual(['a'], first(result))

    def test_candidates_see_the_placements_so_far(self):
        seen = []

        def record(instance, snapshot):
            seen.append((instance.uuid, [m.instance for m in
                                         snapshot.planned]))
            return h.allow_all(instance, snapshot)
        hosts = [host('a', 10.0), host('b', 10.0), host('c', 10.0)]
        instances = [h.instance('a1', 'a', 0.5, memory_mb=2048),
                     h.instance('a2', 'a', 0.5, memory_mb=1024)]
        result = plan(snap(hosts, instances), steady({None: 3.0}),
                      candidates=record)
        self.assertEqual(['b'], first(result))
        hosts = [host('a', 10.0), host('b', 10.0), host('c', 10.0)]
        instances = [h.instance('b1', 'b', 0.5, memory_mb=2048),
                     h.instance('b2', 'b', 0.5, memory_mb=1024),
                     h.instance('a1', 'a', 0.5, memory_mb=9000),
                     h.instance('c1', 'c', 0.5, memory_mb=9000)]
        seen.clear()
        plan(snap(hosts, instances), steady({None: 3.0}), candidates=record)
        # Then a's, with b's placed: b and a go in one step (b1, placed on
        # a, is placed again).
        self.assertEqual([('b1', []), ('b2', ['b1']), ('a1', ['b2']),
                          ('b1', ['b2', 'a1'])], seen)
        # The larger memory first, whatever the uuids.
        instances = [h.instance('b1', 'b', 0.5, memory_mb=1024),
                     h.instance('b2', 'b', 0.5, memory_mb=2048),
                     *instances[2:]]
        seen.clear()
        plan(snap(hosts, instances), steady({None: 3.0}), candidates=record)
        self.assertEqual(['b2', 'b1'], [uuid for uuid, _ in seen][:2])
        # Equal memory: the one with more vCPUs first, then by uuid.
        instances = [h.instance('b1', 'b', 0.5, memory_mb=2048, vcpus=2),
                     h.instance('b2', 'b', 0.5, memory_mb=2048, vcpus=4),
                     h.instance('b3', 'b', 0.5, memory_mb=2048, vcpus=4),
                     *instances[2:]]
        seen.clear()
        plan(snap(hosts, instances), steady({None: 3.0}), candidates=record)
        self.assertEqual(['b2', 'b3', 'b1'],
                         [uuid for uuid, _ in seen][:3])

    def test_a_more_loaded_host_after_the_best_does_not_replace_it(self):
        where = []

        def record(instance, snapshot):
            where.append([m.destination for m in snapshot.planned])
            return h.allow_all(instance, snapshot)
        hosts = [host('a', 10.0), host('b', 1.0), host('c', 30.0)]
        instances = [h.instance('b1', 'b', 0.1, memory_mb=1024),
                     h.instance('b2', 'b', 0.1, memory_mb=512),
                     *(h.instance(f'{n}1', n, 0.1, memory_mb=8192)
                       for n in 'ac')]
        plan(snap(hosts, instances), steady({None: 4.1}),
             candidates=record)
        self.assertEqual(['a'], where[1])

    def test_each_instance_to_the_least_loaded_host(self):
        where = []

        def record(instance, snapshot):
            where.append([(m.instance, m.destination)
                          for m in snapshot.planned])
            return h.allow_all(instance, snapshot)
        hosts = [host('a', 30.0), host('b', 1.0), host('c', 10.0),
                 host('d', 10.0)]
        instances = [h.instance('b1', 'b', 0.1, memory_mb=2048),
                     h.instance('b2', 'b', 0.05, memory_mb=1024),
                     h.instance('b3', 'b', 0.05, memory_mb=512),
                     *(h.instance(f'{n}1', n, 0.1, memory_mb=8192)
                       for n in 'acd')]
        result = plan(snap(hosts, instances), steady({None: 5.2}),
                      candidates=record)
        self.assertEqual(['b'], first(result))
        # c and d tie at 10 %: b1 to c, the first by name; b2 to d, now
        # the least loaded; b3 is offered with both placements done.
        self.assertEqual([('b1', 'c'), ('b2', 'd')], where[2])

    def test_waits_for_the_low_counter(self):
        result = plan(self.quiet(), steady({None: 4.0}),
                      counters={None: 3})
        self.assertEqual(['b'], first(result))
        result = plan(self.quiet(), steady({None: 4.0}),
                      counters={None: 2})
        self.assertEqual((), result.actions)
        self.assertEqual('3 host(s) take load, the pool keeps 1 (forecast '
                         '13.3% in 900 s under the band\'s middle 63%, '
                         'reserve 0, minimum 1): 2 to spare for 2 of 3 '
                         'periods: no standby', result.pools[0].reason)
        # 12 cores need two hosts under the middle: none to spare, whatever
        # the counter.
        result = plan(snap([host('a', 60.0), host('b', 60.0)]),
                      steady({None: 12.0}))
        self.assertEqual('2 host(s) take load, the pool keeps 2 (forecast '
                         '60.0% in 900 s under the band\'s middle 63%, '
                         'reserve 0, minimum 1): no standby',
                         result.pools[0].reason)
        # A pool far under the band's bottom with no host to spare.
        result = plan(snap([host('a', 10.0)]), steady({None: 1.0}))
        self.assertEqual((), result.actions)

    def test_minimum_and_reserve(self):
        snapshot = self.quiet()
        config = dataclasses.replace(CONFIG, min_hosts=3)
        result = plan(snapshot, steady({None: 4.0}), config=config)
        self.assertEqual((), result.actions)
        self.assertIn('the pool keeps 3 (forecast 13.3% in 900 s under the '
                      'band\'s middle 63%, reserve 0, minimum 3): no '
                      'standby', result.pools[0].reason)
        # 4 cores need one host at 63 %; a reserve of 1 keeps two.
        config = dataclasses.replace(CONFIG, reserve_hosts=1)
        self.assertEqual(['b'], [a.host for a in plan(
            snapshot, steady({None: 4.0}), config=config).actions])
        # A minimum of 2: one host of the two to spare goes.
        config = dataclasses.replace(CONFIG, min_hosts=2)
        self.assertEqual(['b'], [a.host for a in plan(
            snapshot, steady({None: 4.0}), config=config).actions])
        config = dataclasses.replace(CONFIG, reserve_hosts=2)
        self.assertEqual((), plan(snapshot, steady({None: 4.0}),
                                  config=config).actions)
        # 10 cores need two hosts under the middle; three stay for the
        # reserve.
        four = snap([host(n, 25.0) for n in 'abcd'])
        config = dataclasses.replace(CONFIG, reserve_hosts=1)
        self.assertEqual(['a'], [a.host for a in plan(
            four, steady({None: 10.0}), config=config).actions])
        # Two hosts, one needed: the reserve keeps the other.
        two = snap([host('a', 10.0), host('b', 10.0)])
        config = dataclasses.replace(CONFIG, reserve_hosts=1)
        self.assertEqual((), plan(two, steady({None: 2.0}),
                                  config=config).actions)
        self.assertEqual(['a'], [a.host for a in plan(
            two, steady({None: 2.0})).actions])

    def test_standby_leaves_the_middle_and_a_wake_waits_for_the_top(self):
        # 14 cores: two hosts hold them under the top (16.2), not under the
        # middle (12.6): no standby; yet with two hosts on, no wake.
        hosts = [host('a', 50.0), host('b', 50.0), host('c', 40.0)]
        result = plan(snap(hosts), steady({None: 14.0}))
        self.assertEqual((), result.actions)
        self.assertIn('the pool keeps 3', result.pools[0].reason)
        self.assertEqual(2, result.pools[0].needed)
        hosts = [host('a', 70.0), host('b', 70.0),
                 host('c', None, power=model.STANDBY, schedulable=False)]
        result = plan(snap(hosts), steady({None: 14.0}))
        self.assertEqual((), result.actions)
        # Fewer hosts than the pool keeps: none to spare, whatever the
        # counter.
        self.assertEqual('2 host(s) take load, the pool keeps 3 (forecast '
                         '70.0% in 900 s under the band\'s middle 63%, '
                         'reserve 0, minimum 1): no standby',
                         result.pools[0].reason)
        self.assertEqual(81.0, power.PowerConfig().target + 18.0)

    def test_the_forecast_not_the_current_demand_sizes_the_pool(self):
        # Now 4 cores; 17 forecast on the ramp two horizons (1800 s) ahead,
        # more than two hosts hold at 81 %.
        rising = forecast.Forecast(time=0.0, level=4.0, trend=13.0 / 1800,
                                   variance=0.0, step=300.0, samples=9)
        result = plan(self.quiet(), {None: rising})
        self.assertEqual((), result.actions)
        self.assertIn('the pool keeps 3 (forecast 56.7% in 1800 s',
                      result.pools[0].reason)

    def test_memory_in_use_needs_hosts_too(self):
        hosts = [host('a', 10.0, ram=80.0), host('b', 10.0, ram=80.0),
                 host('c', 10.0, ram=20.0)]
        result = plan(snap(hosts), steady({None: 3.0}))
        # 18 GB in use; two hosts hold exactly 18 at 90 %.
        self.assertEqual(['a'], first(result))
        hosts[2] = host('c', 10.0, ram=20.1)
        result = plan(snap(hosts), steady({None: 3.0}))
        self.assertEqual((), result.actions)

    def test_none_while_a_host_wakes(self):
        extra = host('z', None, power=model.WAKING, schedulable=False)
        result = plan(self.quiet(extra=[extra]), steady({None: 4.5}))
        self.assertEqual((), result.actions)
        self.assertIn('waiting for host z to boot', result.pools[0].reason)

    def test_several_hosts_in_one_step_each_with_the_others_placed(self):
        # 6 hosts at 10 %, one instance of 1 core each; 6 cores need one
        # host under the middle, the reserve keeps a second: four go.
        hosts = [host(n, 10.0) for n in 'abcdef']
        instances = [h.instance(f'{n}1', n, 1.0, memory_mb=1024 * (i + 1))
                     for i, n in enumerate('abcdef')]
        config = dataclasses.replace(CONFIG, reserve_hosts=1)
        result = plan(snap(hosts, instances), steady({None: 6.0}),
                      config=config)
        self.assertEqual(['a', 'b', 'c', 'd'],
                         [a.host for a in result.actions])
        self.assertEqual({power.STANDBY}, {a.kind for a in result.actions})
        # Each host's instance lands on a host left, never on one chosen
        # before it: e and f hold the four, each under its ceiling.
        self.assertIn('with a, b, c emptied too', result.actions[3].reason)
        # Nova's filters allow only f: a's and b's 3 cores take it from
        # 20 to 80 %, c's would take it over its ceiling (81 %).
        instances = [h.instance(f'{n}1', n, 3.0, memory_mb=1024 * (i + 1))
                     for i, n in enumerate('abcdef')]

        def only_f(instance, snapshot):
            return model.Candidates(allowed=['f'])
        result = plan(snap([host(n, 20.0) for n in 'abcdef'], instances),
                      steady({None: 12.0}), config=config,
                      candidates=only_f)
        self.assertEqual(['a', 'b'], [a.host for a in result.actions])
        self.assertIn('c: instance c1 has no allowed destination',
                      result.pools[0].reason)

    def test_instances_placed_on_a_host_chosen_later_are_placed_again(self):
        seen = []

        def record(instance, snapshot):
            seen.append((instance.uuid, [(m.instance, m.destination)
                                         for m in snapshot.planned]))
            return h.allow_all(instance, snapshot)
        hosts = [host(n, 10.0) for n in 'abcd']
        instances = [h.instance('a1', 'a', 0.5, memory_mb=1024),
                     h.instance('b1', 'b', 0.5, memory_mb=2048),
                     h.instance('c1', 'c', 0.5, memory_mb=8192),
                     h.instance('d1', 'd', 0.5, memory_mb=9000)]
        result = plan(snap(hosts, instances), steady({None: 2.0}),
                      candidates=record)
        self.assertEqual(['a', 'b', 'c'], [a.host for a in result.actions])
        # a1 goes to b (the first of equals); b's check moves b1 and a1
        # on, to c and d; c's moves c1, and b1 again, to d.
        self.assertEqual([('a1', []),
                          ('b1', []), ('a1', [('b1', 'c')]),
                          ('c1', [('a1', 'd')]),
                          ('b1', [('a1', 'd'), ('c1', 'd')])], seen)

    def test_a_standby_while_another_enters_counts_its_instances(self):
        offered = []

        def record(instance, snapshot):
            offered.append((instance.uuid, sorted(m.instance
                                                  for m in snapshot.planned)))
            return h.allow_all(instance, snapshot)
        hosts = [host('a', 20.0), host('b', 20.0), host('c', 20.0),
                 host('e', 10.0, power=model.ENTERING, draining=True,
                      schedulable=False)]
        instances = [h.instance('e1', 'e', 1.0, memory_mb=512),
                     h.instance('a1', 'a', 2.0, memory_mb=1024),
                     h.instance('b1', 'b', 2.0, memory_mb=2048),
                     h.instance('c1', 'c', 2.0, memory_mb=4096)]
        result = plan(snap(hosts, instances), steady({None: 7.0}),
                      candidates=record)
        # 7 cores: two hosts under the middle; one of three to spare.
        self.assertEqual(['a'], [a.host for a in result.actions])
        # e1 was placed on a, which goes: e1 is placed again.
        self.assertEqual([('e1', []), ('a1', []), ('e1', ['a1'])],
                         offered[:3])
        self.assertIn('host e entering standby: draining',
                      result.pools[0].reason)
        # The entering host's instance fits nowhere: no other standby.
        instances[0] = h.instance('e1', 'e', 6.5, memory_mb=512)
        result = plan(snap(hosts, instances), steady({None: 7.0}))
        self.assertEqual((), result.actions)
        self.assertIn('no other standby until the hosts entering standby '
                      'are placed: e: instance e1 has no allowed destination',
                      result.pools[0].reason)
        # An instance the drain already moves this period is counted where
        # it goes, not offered again.
        move = model.Move(instance='e1', source='e', destination='b',
                          reason='drain', expected={}, memory_mb=512,
                          goal=model.DRAIN)
        offered.clear()
        result = plan(dataclasses.replace(
            snap(hosts, instances), planned=(move,)), steady({None: 7.0}),
            candidates=record)
        self.assertEqual('a1', offered[0][0])

    def test_this_periods_moves_load_their_destinations(self):
        # a drains (maintenance); b's instance fits on c (level off) at
        # 35 %, not with a1 moving there this period too (85 %).
        hosts = [host('a', 10.0, draining=True, schedulable=False),
                 host('b', 5.0), host('c', 30.0, level='off')]
        instances = [h.instance('a1', 'a', 5.0, memory_mb=4096),
                     h.instance('b1', 'b', 0.5, memory_mb=1024),
                     h.instance('c1', 'c', 3.0, memory_mb=2048)]
        snapshot = snap(hosts, instances)
        self.assertEqual(['b'], first(plan(snapshot, steady({None: 4.5}))))

        def moving(instance):
            return dataclasses.replace(snapshot, planned=(model.Move(
                instance=instance, source='a', destination='c',
                reason='drain', expected={}, memory_mb=4096,
                goal=model.DRAIN),))
        result = plan(moving('a1'), steady({None: 4.5}))
        self.assertEqual((), result.actions)
        self.assertIn('b: instance b1 has no allowed destination',
                      result.pools[0].reason)
        # A move of an instance the snapshot does not carry adds nothing.
        self.assertEqual(['b'], first(plan(moving('gone'),
                                           steady({None: 4.5}))))

    def test_levels(self):
        snapshot = self.quiet()
        off = dataclasses.replace(snapshot, hosts={
            n: dataclasses.replace(x, power_level='off')
            for n, x in snapshot.hosts.items()})
        result = plan(off, steady({None: 4.0}))
        self.assertEqual(((), 'power management off', 'off'),
                         (result.actions, result.pools[0].reason,
                          result.pools[0].level))
        # A host whose own level is off is never chosen; the pool's level
        # is the most permissive of its hosts'.
        mixed = dataclasses.replace(snapshot, hosts={
            **snapshot.hosts, 'b': dataclasses.replace(
                snapshot.hosts['b'], power_level='off'),
            'c': dataclasses.replace(snapshot.hosts['c'],
                                     power_level='manual')})
        result = plan(mixed, steady({None: 4.0}))
        self.assertEqual(['c'], first(result))
        self.assertEqual(AUTO, result.pools[0].level)
        # Whatever the order; a level it does not know counts as off.
        for levels, pool_level in ((('off', 'manual', 'bogus'), 'manual'),
                                   (('bogus', 'off', 'off'), 'off'),
                                   (('bogus', 'bogus', 'bogus'), 'off')):
            hosts = dataclasses.replace(snapshot, hosts={
                n: dataclasses.replace(x, power_level=level)
                for (n, x), level in zip(sorted(snapshot.hosts.items()),
                                         levels, strict=True)})
            self.assertEqual(pool_level, plan(
                hosts, steady({None: 4.0})).pools[0].level)

    def test_unschedulable_unmeasured_or_maintenance_hosts_stay(self):
        hosts = [host('a', 10.0), host('b', 10.0, schedulable=False),
                 host('c', None), host('d', 10.0, draining=True,
                                      schedulable=False)]
        result = plan(snap(hosts), steady({None: 3.0}),
                      config=dataclasses.replace(CONFIG, min_hosts=1))
        self.assertEqual([], [a.host for a in result.actions
                              if a.host != 'a'])

    def test_a_queued_host_is_not_put_in_standby(self):
        # q would be the cheapest to empty; it waits for its maintenance.
        hosts = [host('a', 10.0), host('b', 10.0), host('q', 10.0,
                                                      queued=True)]
        instances = [h.instance('a1', 'a', 0.5, memory_mb=4096),
                     h.instance('b1', 'b', 0.5, memory_mb=2048),
                     h.instance('q1', 'q', 0.5, memory_mb=1024)]
        config = dataclasses.replace(CONFIG, min_hosts=1)
        result = plan(snap(hosts, instances), steady({None: 1.5}),
                      config=config)
        # One host is kept (no reserve): the two out of the queue go.
        self.assertEqual(['b', 'a'], [a.host for a in result.actions
                                      if a.kind == power.STANDBY])
        free = plan(snap([dataclasses.replace(x, queued=False)
                          for x in hosts], instances),
                    steady({None: 1.5}), config=config)
        self.assertEqual(['q'], [a.host for a in free.actions
                                 if a.kind == power.STANDBY][:1])

    def test_no_metrics_no_standby(self):
        result = plan(snap([host('a', None), host('b', None)]), {})
        self.assertEqual((), result.actions)
        self.assertEqual('no fresh CPU metrics: no standby',
                         result.pools[0].reason)

    def test_pools_are_planned_apart(self):
        hosts = [host('a1', 10.0, pool='A'), host('a2', 10.0, pool='A'),
                 host('b1', 10.0, pool='B'), host('b2', 10.0, pool='B')]
        instances = [h.instance('i', 'a1', 1.0, memory_mb=1024),
                     h.instance('j', 'b2', 1.0, memory_mb=1024)]
        result = plan(snap(hosts, instances, mode='aggregate'),
                      steady({'A': 2.0, 'B': 2.0}),
                      counters={'A': 5, 'B': 5})
        self.assertEqual([('a2', 'A'), ('b1', 'B')],
                         [(a.host, a.pool) for a in result.actions])
        # An instance never leaves its pool: with A's other host full,
        # a1 cannot be emptied into B.
        hosts[1] = host('a2', 80.0, pool='A')
        result = plan(snap(hosts, instances, mode='aggregate'),
                      steady({'A': 9.0, 'B': 2.0}),
                      counters={'A': 5, 'B': 5},
                      config=dataclasses.replace(CONFIG, band_low=90.0,
                                                 band_high=85.0))
        self.assertEqual(['B'], [a.pool for a in result.actions])



def three_at_70(cpu_a, **a_fields):
    """Hosts a, b and c at ``cpu_threshold`` 70 (ceiling 65), a at
    ``cpu_a`` with one instance carrying it all, b and c at 10 %."""
    return snap([host('a', cpu_a, cpu_threshold=70.0, **a_fields),
                 host('b', 10.0, cpu_threshold=70.0),
                 host('c', 10.0, cpu_threshold=70.0)],
                [h.instance('a1', 'a', cpu_a / 10, memory_mb=8192),
                 h.instance('b1', 'b', 1.0, memory_mb=1024),
                 h.instance('c1', 'c', 1.0, memory_mb=2048)])

class CeilingTest(testtools.TestCase):
    """Every host stays under its threshold less the margin at the
    forecast: a standby's placement and a wake judge each host."""

    def three(self, cpu_b=9.0):
        # Thresholds of 70: each host's ceiling is 65 %, under the band.
        hosts = [host('a', 55.0, cpu_threshold=70.0),
                 host('b', cpu_b, cpu_threshold=70.0),
                 host('c', 55.0, cpu_threshold=70.0)]
        instances = [h.instance('a1', 'a', 5.5, memory_mb=4096),
                     h.instance('b1', 'b', 0.9, memory_mb=1024),
                     h.instance('c1', 'c', 5.5, memory_mb=4096)]
        return snap(hosts, instances)

    def test_destinations_at_the_forecast_under_their_ceiling(self):
        # b1 takes a or c to 64 %, under 65: b enters standby.
        result = plan(self.three(), steady({None: 11.9}))
        self.assertEqual(['b'], first(result))
        # Demand forecast 5 % up: a would be at 57.75 + 9.45 = 67.2 %,
        # under the band top (81) but over its ceiling.
        result = plan(self.three(), steady({None: 11.9 * 1.05}))
        self.assertEqual((), result.actions)
        self.assertIn('b: instance b1 has no allowed destination in the pool '
                      'left under its threshold less the margin at the '
                      'forecast', result.pools[0].reason)

    def test_a_host_left_over_its_ceiling_refuses_the_standby(self):
        result = plan(three_at_70(60.0), steady({None: 8.0}))
        self.assertEqual(['b'], first(result))
        # 8 cores forecast at 9: a, which receives nothing, would be at
        # 67.5 %; the pool's mean (30 %) is far under the band.
        result = plan(three_at_70(60.0), steady({None: 9.0}))
        self.assertEqual((), result.actions)
        reason = result.pools[0].reason
        self.assertIn('b: host a forecast at 67.5%, over its threshold less '
                      'the margin 65%', reason)
        self.assertIn('c: host a forecast at 67.5%', reason)
        self.assertIn('a: instance a1 has no allowed destination', reason)

    def test_exactly_at_its_ceiling_is_under_it(self):
        # A forecast under the demand now: the demand now, no growth.
        below = forecast.Forecast(time=0.0, level=8.0, trend=0.0,
                                  variance=0.0, step=300.0, samples=9)
        self.assertEqual(['b'], first(plan(three_at_70(65.0),
                                           {None: below})))
        result = plan(three_at_70(65.1), {None: below})
        self.assertEqual((), result.actions)
        self.assertIn('b: host a forecast at 65.1%', result.pools[0].reason)

    def test_a_hosts_deviation_is_added_at_the_forecast(self):
        # a at 60 % strays by 6 points: 66 % at the forecast, over 65.
        result = plan(three_at_70(60.0, cpu_deviation=6.0),
                      steady({None: 8.0}))
        self.assertEqual((), result.actions)
        self.assertIn('b: host a forecast at 66.0%, over its threshold less '
                      'the margin 65%', result.pools[0].reason)

    def test_no_demand_now_reads_each_host_at_its_outlook(self):
        # Every host at 0 %: no growth to read, a's outlook as it is (60
        # or 90 %, against its ceiling of 81).
        for expected, chosen in ((60.0, ['b']), (90.0, [])):
            hosts = [host('a', 0.0, level='off', cpu_expected=expected),
                     host('b', 0.0)]
            result = plan(snap(hosts, [h.instance('b1', 'b', 0.0)]),
                          steady({None: 0.0}))
            self.assertEqual(chosen, first(result), expected)
        self.assertIn('b: host a forecast at 90.0%', result.pools[0].reason)

    def test_the_margin_is_the_planners(self):
        # A margin of 2: ceilings of 68, over a's 67.2 %.
        relaxed = dataclasses.replace(self.three(), config=model.PlannerConfig(
            margin=2.0))
        self.assertEqual(['b'], [a.host for a in plan(
            relaxed, steady({None: 11.9 * 1.05})).actions])

    def test_a_wake_keeps_every_host_under_its_ceiling(self):
        hosts = [host('a', 70.0, cpu_threshold=70.0),
                 host('b', 70.0, cpu_threshold=70.0),
                 host('s', None, power=model.STANDBY, schedulable=False)]
        # 14 cores: under the band top of two hosts (16.2), over their
        # ceilings (13).
        result = plan(snap(hosts), steady({None: 14.0}), counters={})
        self.assertEqual([('wake', 's')],
                         [(a.kind, a.host) for a in result.actions])
        self.assertIn('demand forecast 70.0% in 900 s, over the band top '
                      '81% and their thresholds less the margin 5 of the 2 '
                      'host(s) taking load or waking',
                      result.actions[0].reason)
        self.assertEqual(3, result.pools[0].needed)
        # Their ceilings above the band's top: the band decides.
        hosts[:2] = [host('a', 70.0), host('b', 70.0)]
        result = plan(snap(hosts), steady({None: 14.0}), counters={})
        self.assertEqual(((), 2), (result.actions, result.pools[0].needed))

    def test_a_ramp_is_read_two_horizons_ahead(self):
        hosts = [host('a', 70.0), host('b', 70.0),
                 host('s', None, power=model.STANDBY, schedulable=False)]
        # 14 cores rising 3 every 1800 s: 15.5 in 900 s, under the top of
        # two hosts (16.2); 17 in 1800 s, over it.
        rising = forecast.Forecast(time=0.0, level=14.0, trend=3.0 / 1800,
                                   variance=0.0, step=300.0, samples=9)
        self.assertEqual(2.0, power.RAMP_HORIZONS)
        result = plan(snap(hosts), {None: rising}, counters={})
        self.assertEqual(['s'], first(result))
        self.assertIn('demand forecast 85.0% in 1800 s',
                      result.actions[0].reason)
        self.assertAlmostEqual(85.0, result.actions[0].forecast)
        # Falling: one horizon, and never less than now.
        falling = dataclasses.replace(rising, trend=-3.0 / 1800)
        result = plan(snap(hosts), {None: falling}, counters={})
        self.assertEqual(((), 70.0), (result.actions,
                                      result.pools[0].forecast))
        self.assertEqual('2 host(s) take load, the pool keeps 3 (forecast '
                         '70.0% in 900 s under the band\'s middle 63%, '
                         'reserve 0, minimum 1): no standby',
                         result.pools[0].reason)


class WakeTest(testtools.TestCase):

    def pool(self, cpu=50.0, extra=()):
        return snap([host('a', cpu), host('b', cpu),
                     host('s1', None, vcpus=10, power=model.STANDBY,
                          schedulable=False),
                     host('s2', None, vcpus=20, power=model.STANDBY,
                          schedulable=False),
                     host('s3', None, vcpus=20, power=model.STANDBY,
                          schedulable=False), *extra])

    def test_a_forecast_crossing_wakes_the_largest_host(self):
        rising = forecast.Forecast()
        for n in range(24):
            rising = forecast.update(rising, n * 300.0, 14.0 - 0.6 * (23 - n))
        expected, deviation = forecast.ahead(rising, CONFIG.horizon)
        self.assertLess(expected, 16.2)
        self.assertGreater(expected + deviation, 16.2)
        # Now 14 cores on 20 vCPUs: 70 %, under the top.
        result = plan(self.pool(cpu=70.0), {None: outlook.Outlook(rising)},
                      counters={})
        [action] = result.actions
        self.assertEqual((power.WAKE, 's2', 0.0),
                         (action.kind, action.host, action.gb))
        self.assertIn('demand forecast', action.reason)
        self.assertIn('in 1800 s, over the band top 81% and their '
                      'thresholds less the margin 5 of the 2 host(s)',
                      action.reason)
        self.assertGreater(action.forecast, 81.0)
        self.assertEqual(('s1', 's2', 's3'), result.pools[0].standby)
        self.assertEqual(('a', 'b'), result.pools[0].on)
        # Flat at the same level: nothing to wake.
        result = plan(self.pool(cpu=70.0), steady({None: 14.0}),
                      counters={})
        self.assertEqual((), result.actions)

    def test_the_forecasts_deviation_is_added(self):
        # Flat at 14 cores (70 %), with a deviation of 5: over the top.
        flat = forecast.Forecast(time=0.0, level=14.0, trend=0.0,
                                 variance=9.0, step=300.0, samples=9)
        expected, deviation = forecast.ahead(flat, CONFIG.horizon)
        self.assertEqual(14.0, expected)
        self.assertGreater(deviation, 2.2)
        result = plan(self.pool(cpu=70.0), {None: flat}, counters={})
        self.assertEqual(['s2'], first(result))
        self.assertAlmostEqual(100.0 * (14.0 + deviation) / 20,
                               result.actions[0].forecast)

    def test_over_the_band_now_wakes_one(self):
        result = plan(self.pool(cpu=85.0), steady({None: 17.0}))
        self.assertEqual([('wake', 's2')],
                         [(a.kind, a.host) for a in result.actions])
        # With no forecast yet, the current demand still counts.
        result = plan(self.pool(cpu=85.0), {})
        self.assertEqual([('wake', 's2')],
                         [(a.kind, a.host) for a in result.actions])

    def test_a_waking_host_counts_as_capacity_to_come(self):
        waking = host('w', None, vcpus=10, power=model.WAKING,
                      schedulable=False)
        result = plan(self.pool(cpu=85.0, extra=[waking]),
                      steady({None: 17.0}))
        self.assertEqual((), result.actions)
        self.assertIn('waiting for host w to boot', result.pools[0].reason)
        self.assertEqual(('w',), result.pools[0].waking)

    def test_a_boot_with_no_valid_host_wakes_one(self):
        result = plan(self.pool(cpu=10.0), steady({None: 2.0}),
                      unplaced={None})
        self.assertEqual(
            [('wake', 's2', 'a boot found no valid host in the pool: wake '
              'host s2 (20 vCPUs)')],
            [(a.kind, a.host, a.reason) for a in result.actions])

    def test_under_the_minimum_wakes_one(self):
        config = dataclasses.replace(CONFIG, min_hosts=3)
        result = plan(self.pool(cpu=10.0), steady({None: 2.0}),
                      config=config)
        self.assertEqual(['s2'], first(result))
        self.assertIn('2 host(s) taking load or waking, under the minimum 3',
                      result.actions[0].reason)

    def test_demand_into_the_reserve_wakes_one(self):
        config = dataclasses.replace(CONFIG, reserve_hosts=1)
        # 14 cores need both hosts at 81 %: no reserve left.
        result = plan(self.pool(cpu=70.0), steady({None: 14.0}),
                      config=config)
        self.assertEqual(['s2'], first(result))
        self.assertIn('the forecast in 900 s needs 2 host(s) under the band '
                      'top 81% and their thresholds less the margin 5 and '
                      'the reserve 1 more; 2 take load or wake',
                      result.actions[0].reason)

    def test_demand_exactly_at_the_top_of_all_hosts(self):
        hosts = [host('a', 80.0), host('b', 80.0),
                 host('s', None, power=model.STANDBY, schedulable=False)]
        result = plan(snap(hosts), steady({None: 16.2}))
        self.assertEqual(((), 2), (result.actions, result.pools[0].needed))
        result = plan(snap(hosts), steady({None: 16.25}))
        self.assertEqual((['s'], 3), (first(result),
                                      result.pools[0].needed))
        # One host's top exactly: one host; the largest counted first.
        hosts = [host('a', 40.0), host('b', 40.0)]
        result = plan(snap(hosts), steady({None: 8.1}), counters={})
        self.assertEqual(1, result.pools[0].needed)
        hosts = [host('a', 10.0), host('b', 10.0, vcpus=20)]
        result = plan(snap(hosts), steady({None: 15.0}), counters={})
        self.assertEqual(1, result.pools[0].needed)

    def test_a_reserve_already_kept_wakes_nothing(self):
        # 14 cores need two hosts at 81 %; three take load: the reserve.
        hosts = [host('a', 50.0), host('b', 50.0), host('c', 40.0),
                 host('s', None, power=model.STANDBY, schedulable=False)]
        config = dataclasses.replace(CONFIG, reserve_hosts=1)
        result = plan(snap(hosts), steady({None: 14.0}), config=config)
        self.assertEqual([], [a.kind for a in result.actions
                              if a.kind == power.WAKE])

    def test_a_lone_host_with_a_reserve_wakes_one(self):
        hosts = [host('a', 30.0),
                 host('s', None, power=model.STANDBY, schedulable=False)]
        config = dataclasses.replace(CONFIG, reserve_hosts=1)
        result = plan(snap(hosts), steady({None: 3.0}), config=config)
        self.assertEqual(['s'], first(result))
        self.assertIn('the forecast in 900 s needs 1 host(s) under the band '
                      'top 81% and their thresholds less the margin 5 and '
                      'the reserve 1 more; 1 take load or wake',
                      result.actions[0].reason)
        result = plan(snap(hosts), steady({None: 3.0}))
        self.assertEqual((), result.actions)

    def test_name_breaks_a_tie(self):
        hosts = [host('a', 95.0),
                 host('s9', None, power=model.STANDBY, schedulable=False),
                 host('s0', None, power=model.STANDBY, schedulable=False)]
        result = plan(snap(hosts), steady({None: 9.5}))
        self.assertEqual(['s0'], first(result))

    def test_nothing_to_wake(self):
        result = plan(snap([host('a', 95.0), host('b', 95.0)]),
                      steady({None: 19.0}))
        self.assertEqual((), result.actions)
        self.assertIn('; no host in standby to wake', result.pools[0].reason)

    def test_level_off_leaves_standby_hosts_alone(self):
        snapshot = self.pool(cpu=95.0)
        off = dataclasses.replace(snapshot, hosts={
            n: dataclasses.replace(x, power_level='off')
            for n, x in snapshot.hosts.items()})
        result = plan(off, steady({None: 19.0}), unplaced={None})
        self.assertEqual((), result.actions)
        self.assertEqual('power management off; 3 host(s) stay in standby',
                         result.pools[0].reason)


class NeededNowTest(testtools.TestCase):
    """Beside the hosts the forecast needs, those the demand now needs:
    the same count, without the forecast (``nova-drs status``)."""

    HOSTS = [host('a', 70.0), host('b', 70.0),
             host('s', None, power=model.STANDBY, schedulable=False)]

    def test_a_ramp_needs_more_hosts_at_the_forecast_than_now(self):
        # 14 cores now: two hosts hold them under the top (16.2); 17 at the
        # forecast two horizons ahead: three.
        rising = forecast.Forecast(time=0.0, level=14.0, trend=3.0 / 1800,
                                   variance=0.0, step=300.0, samples=9)
        [pool] = plan(snap(self.HOSTS), {None: rising}, counters={}).pools
        self.assertEqual((2, 3), (pool.needed_now, pool.needed))

    def test_without_a_forecast_both_read_the_demand_now(self):
        [pool] = plan(snap(self.HOSTS), counters={}).pools
        self.assertEqual((2, 2), (pool.needed_now, pool.needed))

    def test_memory_counts_now_too(self):
        hosts = [host('a', 10.0, ram=80.0), host('b', 10.0, ram=80.0),
                 host('c', 10.0, ram=20.0)]
        [pool] = plan(snap(hosts), steady({None: 3.0})).pools
        self.assertEqual((2, 2), (pool.needed_now, pool.needed))

    def test_ram_thresholds_are_not_rounded_to_the_megabyte(self):
        # 90.004 % of 10240 MB is 9216.41 MB: 90.002 % in use fits one
        # host, 90.005 % does not.
        for ram, needed in ((90.002, 1), (90.005, 2)):
            hosts = [host('a', 10.0, ram=ram, ram_threshold=90.004),
                     host('b', 10.0, ram=0.0, ram_threshold=90.004)]
            [pool] = plan(snap(hosts), steady({None: 2.0})).pools
            self.assertEqual((needed, needed),
                             (pool.needed_now, pool.needed), ram)

    def test_a_host_with_no_ram_sample_adds_no_memory(self):
        # d has no RAM sample: it adds no memory in use. 180 % of a
        # host's 10 GB fits two at 90 %; 180.5 % does not.
        for ram, needed in ((20.0, 2), (20.5, 3)):
            hosts = [host('a', 10.0, ram=80.0), host('b', 10.0, ram=80.0),
                     host('c', 10.0, ram=ram), host('d', 10.0)]
            [pool] = plan(snap(hosts), steady({None: 4.0})).pools
            self.assertEqual((needed, needed),
                             (pool.needed_now, pool.needed), ram)

    def test_none_where_the_pool_is_not_judged(self):
        off = [dataclasses.replace(x, power_level='off') for x in self.HOSTS]
        unmeasured = [host('a', None), host('b', None)]
        for hosts in (off, unmeasured):
            [pool] = plan(snap(hosts), steady({None: 14.0})).pools
            self.assertEqual((None, None), (pool.needed_now, pool.needed))


class CancelTest(testtools.TestCase):

    def entering(self, cpu, level=AUTO, blocked=None):
        hosts = [host('a', cpu), host('b', cpu),
                 host('e', 10.0, power=model.ENTERING, draining=True,
                      schedulable=False, level=level),
                 host('s', None, power=model.STANDBY, schedulable=False)]
        instances = [h.instance('e1', 'e', 1.0, blocked=blocked)]
        return snap(hosts, instances)

    def test_demand_back_gives_the_entering_host_back_first(self):
        result = plan(self.entering(85.0), steady({None: 18.0}))
        [action] = result.actions
        self.assertEqual(('cancel', 'e'), (action.kind, action.host))
        self.assertIn('goes back into service', action.reason)
        self.assertEqual(('e',), result.pools[0].entering)

    def test_while_demand_stays_low_it_keeps_draining(self):
        result = plan(self.entering(20.0), steady({None: 7.0}))
        self.assertEqual((), result.actions)
        self.assertEqual('host e entering standby: draining; 2 host(s) take '
                         'load, the pool keeps 2 (forecast 35.0% in 1800 s '
                         'under the band\'s middle 63%, reserve 0, minimum '
                         '1): no standby', result.pools[0].reason)

    def test_an_instance_that_cannot_move_cancels(self):
        result = plan(self.entering(20.0, blocked='opted out'),
                      steady({None: 5.0}))
        self.assertEqual([('cancel', 'e')],
                         [(a.kind, a.host) for a in result.actions])
        self.assertIn('instance e1 opted out', result.actions[0].reason)

    def test_first_entering_host_by_name(self):
        hosts = [host('a', 90.0), host('b', 90.0),
                 host('e2', 10.0, power=model.ENTERING, draining=True),
                 host('e1', 10.0, power=model.ENTERING, draining=True)]
        result = plan(snap(hosts), steady({None: 20.0}))
        self.assertEqual([('cancel', 'e1')],
                         [(a.kind, a.host) for a in result.actions])
        off = [dataclasses.replace(x, power_level='off') for x in hosts]
        result = plan(snap(off), steady({None: 20.0}))
        self.assertEqual([('cancel', 'e1')],
                         [(a.kind, a.host) for a in result.actions])

    def test_level_off_cancels(self):
        snapshot = self.entering(20.0, level='off')
        off = dataclasses.replace(snapshot, hosts={
            n: dataclasses.replace(x, power_level='off')
            for n, x in snapshot.hosts.items()})
        result = plan(off, steady({None: 5.0}))
        self.assertEqual([('cancel', 'e')],
                         [(a.kind, a.host) for a in result.actions])
        self.assertIn('power management is off', result.actions[0].reason)


class PlanTest(testtools.TestCase):

    def test_pools_in_key_order_and_notes_on_hosts_left_alone(self):
        hosts = [host('a1', 10.0, pool='B'), host('b1', 10.0, pool='A'),
                 host('x', None, pool='A', power=model.STANDBY,
                      excluded=True),
                 host('y', 10.0, pool='A', excluded=True),
                 host('z', None, power=model.WAKING)]
        result = plan(snap(hosts, mode='aggregate'), {}, counters={})
        self.assertEqual(['A', 'B'], [p.pool for p in result.pools])
        self.assertEqual((
            'host x: standby but outside power management (opted out of '
            'DRS, no capacity or unaggregated): left as is',
            'host z: waking but outside power management (opted out of '
            'DRS, no capacity or unaggregated): left as is'), result.notes)
        hosts += [host('w', 10.0, power=model.ENTERING, draining=True,
                       excluded=True),
                  host('v', 10.0, power=h.fresh(model.ON), excluded=True)]
        result = plan(snap(hosts, mode='aggregate'), {}, counters={})
        self.assertEqual(['w', 'x', 'z'],
                         [note.split()[1][:-1] for note in result.notes])
        result = plan(snap(hosts[:2], mode='aggregate'), {}, counters={})
        self.assertEqual((), result.notes)
        # Unaggregated hosts pooled: their pool (None) first.
        result = plan(snap([host('a', 10.0, pool='A'), host('u', 10.0)],
                           mode='aggregate', unaggregated_hosts='pool'),
                      {}, counters={})
        self.assertEqual([None, 'A'], [p.pool for p in result.pools])

    def test_a_pool_missing_from_the_counters_counts_0(self):
        result = plan(snap([host('a', 10.0), host('b', 10.0)]),
                      steady({None: 2.0}), counters={})
        self.assertEqual((0, '2 host(s) take load, the pool keeps 1 '
                             '(forecast 10.0% in 900 s under the band\'s '
                             'middle 63%, reserve 0, minimum 1): 1 to spare '
                             'for 0 of 3 periods: no standby'),
                         (result.pools[0].counter, result.pools[0].reason))

    def test_a_pool_with_no_host_taking_load(self):
        result = plan(snap([host('a', 50.0, draining=True,
                                 schedulable=False)]), steady({None: 5.0}))
        self.assertEqual((None, None), (result.pools[0].utilization,
                                        result.pools[0].forecast))

    def test_inputs_are_immutable(self):
        inputs = power.PowerInputs({}, {None: 1}, CONFIG)
        self.assertEqual(frozenset(), inputs.unplaced)
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, inputs,
                          'counters', {})

    def test_results_are_immutable(self):
        result = plan(snap([host('a', 95.0), host(
            's', None, power=model.STANDBY)]), steady({None: 9.5}))
        for frozen in (result, result.actions[0], result.pools[0]):
            self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                              frozen, 'reason', '')


class PlannerDrainTest(testtools.TestCase):
    """The planner's drain empties an entering host, saying standby."""

    def test_drain_reason_and_verdicts(self):
        # The state as the database gives it: equal, not identical.
        entering = ''.join(['enter', 'ing'])
        hosts = [host('e', 10.0, power=entering, draining=True,
                      schedulable=False),
                 host('m', 10.0, draining=True, schedulable=False),
                 host('a', 10.0),
                 host('s', 0.0, power=model.STANDBY),
                 host('w', 0.0, power=model.WAKING)]
        instances = [h.instance('e1', 'e', 1.0), h.instance('m1', 'm', 1.0)]
        result = planner.plan(
            snap(hosts, instances, max_concurrent_migrations=10,
                 max_concurrent_migrations_per_host=2), h.allow_all)
        moves = {m.instance: m for m in result.moves}
        self.assertEqual({'e1': 'a', 'm1': 'a'},
                         {u: m.destination for u, m in moves.items()})
        self.assertTrue(moves['e1'].reason.startswith(
            'standby: host e is draining; live migration to a'))
        self.assertTrue(moves['m1'].reason.startswith('maintenance: host m'))
        verdicts = {v.host: v.reason for v in result.hosts}
        self.assertEqual('entering standby: draining, not judged',
                         verdicts['e'])
        self.assertEqual('power standby: not judged', verdicts['s'])
        self.assertEqual('power waking: not judged', verdicts['w'])
        rejected = {r.subject: r.rule for r in moves['e1'].rejected}
        self.assertEqual({'m': 'maintenance', 's': 'powered-off',
                          'w': 'powered-off'}, rejected)


class ConfigTest(testtools.TestCase):

    def conf(self, **overrides):
        fresh = cfg.ConfigOpts()
        conf.register_opts(fresh)
        fresh([], project='nova')
        for name, value in overrides.items():
            fresh.set_override(name, value, group='drs')
        return fresh

    def test_defaults(self):
        self.assertEqual(power.PowerConfig(),
                         power.PowerConfig.from_conf(self.conf()))

    def test_follows_the_options(self):
        fresh = self.conf(power_band_low=30.0, power_band_high=70.0,
                          power_reserve_hosts=2, power_min_hosts=3,
                          power_low_periods=9, power_boot_seconds=240,
                          power_forecast_deviations=0.5,
                          rebalance_interval=120)
        self.assertEqual(
            power.PowerConfig(30.0, 70.0, 2, 3, 9, 240.0, 0.5, 120.0),
            power.PowerConfig.from_conf(fresh))
        self.assertEqual(300.0, power.PowerConfig.from_conf(
            fresh, period_seconds=300).period_seconds)
        self.assertEqual(360.0, power.PowerConfig.from_conf(fresh).horizon)

    def test_the_band_must_be_a_band(self):
        conf.validate(self.conf())
        for low, high in ((81.0, 81.0), (90.0, 60.0)):
            error = self.assertRaises(
                conf.ConfigError, conf.validate,
                self.conf(power_band_low=low, power_band_high=high))
            self.assertIn('[drs] power_band_low', str(error))
        path = self.useFixture(fixtures.TempDir()).join('nova.conf')
        with open(path, 'w') as stream:
            stream.write('[drs]\npower_management = sometimes\n')
        fresh = cfg.ConfigOpts()
        conf.register_opts(fresh)
        fresh(['--config-file', path], project='nova')
        error = self.assertRaises(conf.ConfigError, conf.validate, fresh)
        self.assertIn('[drs] power_management', str(error))


# Properties on generated pools.

_STATES = st.sampled_from([model.ON] * 12 + [model.ENTERING] + [
    model.STANDBY] * 2 + [model.WAKING])


@st.composite
def cases(draw, quiet=False):
    """A snapshot with its counters, forecasts, config and unplaced
    pools; ``quiet``: every host on and little demand, so that most
    examples put a host in standby."""
    names = [f'h{n}' for n in range(draw(st.integers(1, 7)))]
    hosts, instances = [], []
    for name in names:
        state = model.ON if quiet else draw(_STATES)
        on = state in (model.ON, model.ENTERING)
        cpu = draw(st.one_of(st.none(), st.integers(0, 40).map(float),
                             st.integers(0, 100).map(float))) if on else None
        if quiet:
            cpu = float(draw(st.integers(0, 30)))
        hosts.append(host(
            name, cpu, vcpus=draw(st.sampled_from([4, 8, 16])),
            level=draw(st.sampled_from(['off', 'manual', AUTO, AUTO])),
            pool=draw(st.sampled_from(['A', 'B'])), power=state,
            draining=state == model.ENTERING or (
                on and draw(st.integers(0, 9)) == 0),
            schedulable=state == model.ON and draw(st.integers(0, 9)) > 0,
            ram=draw(st.one_of(st.none(), st.integers(0, 60).map(float),
                               st.integers(0, 100).map(float)))))
        if on:
            for n in range(draw(st.integers(0, 3))):
                blocked = draw(st.sampled_from(
                    [None, None, None, 'opted out', 'migrating']))
                instances.append(h.instance(
                    f'{name}-{n}', name, draw(st.floats(0.0, 4.0)),
                    memory_mb=draw(st.sampled_from([512, 2048, 4096])),
                    blocked=blocked, transient=blocked == 'migrating'))
    config = power.PowerConfig(
        band_low=draw(st.sampled_from([30.0, 45.0, 60.0])), band_high=81.0,
        reserve_hosts=draw(st.integers(0, 2)),
        min_hosts=draw(st.integers(1, 3)), low_periods=2,
        boot_seconds=600.0, forecast_deviations=1.0, period_seconds=300.0)
    mode = draw(st.sampled_from(['global', 'aggregate']))
    counters = {key: draw(st.integers(2 if quiet else 0, 4))
                for key in (None, 'A', 'B')}
    demand = {key: draw(st.floats(0.0, 12.0)) for key in (None, 'A', 'B')}
    unplaced = frozenset() if quiet else frozenset(draw(st.sets(
        st.sampled_from([None, 'A', 'B']), max_size=1)))
    return (snap(hosts, instances, mode=mode), counters, steady(demand),
            config, unplaced)


class PropertiesTest(testtools.TestCase):

    @hypothesis.settings(max_examples=300, deadline=None)
    @hypothesis.given(cases(), st.randoms(use_true_random=False))
    def test_rails(self, case, rng: random.Random):
        self.check(case, rng)

    @hypothesis.settings(max_examples=200, deadline=None)
    @hypothesis.given(cases(quiet=True), st.randoms(use_true_random=False))
    def test_rails_of_quiet_pools(self, case, rng: random.Random):
        self.check(case, rng)

    def check(self, case, rng):
        snapshot, counters, forecasts, config, unplaced = case
        result = power.plan(snapshot, h.allow_all, forecasts, counters,
                            config, unplaced)
        # Deterministic, whatever order the hosts come in.
        names = list(snapshot.hosts)
        rng.shuffle(names)
        shuffled = dataclasses.replace(snapshot, hosts={
            n: snapshot.hosts[n] for n in names})
        self.assertEqual(result, power.plan(shuffled, h.allow_all, forecasts,
                                            counters, config, unplaced))
        pools = [p.pool for p in result.pools]
        self.assertEqual(len(pools), len(set(pools)))
        # One wake or cancel per pool, or standbys only.
        for pool in {a.pool for a in result.actions}:
            kinds = [a.kind for a in result.actions if a.pool == pool]
            self.assertTrue(len(kinds) == 1 or set(kinds) == {power.STANDBY},
                            kinds)
        shed = {a.host for a in result.actions if a.kind == power.STANDBY}
        for verdict in result.pools:
            self.assertTrue(verdict.reason)
        def key(member):
            return working.pool_key(member, snapshot.config)
        for action in result.actions:
            hypothesis.event(action.kind)
            self.assertTrue(action.reason)
            target = snapshot.hosts[action.host]
            self.assertEqual(action.pool, key(target))
            if action.kind == power.WAKE:
                self.assertEqual(model.STANDBY, target.power)
                continue
            if action.kind == power.CANCEL:
                self.assertEqual(model.ENTERING, target.power)
                continue
            self.assertEqual(model.ON, target.power)
            self.assertNotEqual('off', target.power_level)
            self.assertFalse(target.draining)
            mine = [i for i in snapshot.instances if i.host == action.host]
            self.assertFalse([i for i in mine if i.blocked is not None
                              and not i.transient])
            self.assertAlmostEqual(
                sum(i.memory_mb for i in mine) / 1024.0, action.gb, places=3)
            members = [x for x in snapshot.hosts.values()
                       if key(x) == action.pool and not x.excluded]
            self.assertFalse([x for x in members if x.power == model.WAKING])
            left = [x for x in members if x.power == model.ON
                    and not x.draining and x.name not in shed]
            self.assertGreaterEqual(len(left), config.min_hosts)
            self.assertGreaterEqual(len(left), config.reserve_hosts)
            self.assertGreaterEqual(counters[action.pool],
                                    config.low_periods)
            self.assertNotIn(action.pool, unplaced)


class ConsolidateGoalTest(testtools.TestCase):
    """Consolidation is the planner's last goal: the plan carries the
    power plan, made with the period's moves counted."""

    def setUp(self):
        super().setUp()
        # m drains; a, b and c are quiet, so the pool sheds, b first
        # (the least memory to move).
        self.snapshot = snap(
            [host('m', 10.0, draining=True, schedulable=False),
             host('a', 5.0), host('b', 5.0), host('c', 5.0)],
            [h.instance('m1', 'm', 1.0, memory_mb=2048),
             h.instance('a1', 'a', 0.5, memory_mb=4096),
             h.instance('b1', 'b', 0.5, memory_mb=1024),
             h.instance('c1', 'c', 0.5, memory_mb=4096)])
        self.inputs = power.PowerInputs(steady({None: 2.5}), {None: 10},
                                        CONFIG)

    def test_last_in_the_pipeline(self):
        self.assertIs(consolidate, planner.PIPELINE[-1])
        self.assertEqual((model.DRAIN, model.BALANCE, model.LEVEL,
                          model.CONSOLIDATE), planner.GOALS)

    def test_the_plan_carries_the_power_plan_of_the_period(self):
        seen = []

        def record(instance, snapshot):
            seen.append((instance.uuid, [m.instance
                                         for m in snapshot.planned]))
            return h.allow_all(instance, snapshot)
        result = planner.plan(self.snapshot, record, power=self.inputs)
        [move] = result.moves
        self.assertTrue(result.power.actions)
        self.assertEqual(consolidate.after_moves(power.plan(
            dataclasses.replace(self.snapshot, planned=(move,)), h.allow_all,
            self.inputs.forecasts, self.inputs.counters, CONFIG), (move,)),
            result.power)
        # The standby's placement check sees the period's move.
        self.assertIn(('b1', [move.instance]), seen)
        self.assertEqual(result.power.to_dict(), result.to_dict()['power'])

    def test_a_host_a_move_goes_to_is_not_put_in_standby(self):
        result = planner.plan(self.snapshot, h.allow_all, power=self.inputs)
        [move] = result.moves
        alone = power.plan(
            dataclasses.replace(self.snapshot, planned=(move,)), h.allow_all,
            self.inputs.forecasts, self.inputs.counters, CONFIG)
        shed = [a.host for a in alone.actions if a.kind == power.STANDBY]
        # The drain's move goes to a host the power plan alone would shed.
        self.assertIn(move.destination, shed)
        self.assertEqual(sorted(set(shed) - {move.destination}),
                         sorted(a.host for a in result.power.actions
                                if a.kind == power.STANDBY))
        self.assertEqual(
            alone.notes + (f'host {move.destination}: standby left for a '
                           f'later period, a move of this period goes to '
                           f'it',), result.power.notes)

    def test_after_moves_holds_only_the_standby_of_a_destination(self):
        found = power.plan(self.snapshot, h.allow_all, self.inputs.forecasts,
                           self.inputs.counters, CONFIG)
        move = model.Move('a1', 'a', 'b', 'cpu', {})
        self.assertIs(found, consolidate.after_moves(found, ()))
        held = consolidate.after_moves(found, (move,))
        self.assertIn('b', [a.host for a in found.actions])
        self.assertEqual([a for a in found.actions if a.host != 'b'],
                         list(held.actions))

    def test_without_its_inputs_the_plan_is_as_before(self):
        served = planner.plan(self.snapshot, h.allow_all, power=self.inputs)
        result = planner.plan(self.snapshot, h.allow_all)
        self.assertIsNone(result.power)
        self.assertNotIn('power', result.to_dict())
        self.assertEqual(dataclasses.replace(served, power=None), result)
        self.assertEqual(result, planner.plan(
            self.snapshot, h.allow_all, planner.GOALS[:-1], self.inputs))

    def test_alone_it_moves_nothing(self):
        result = planner.plan(self.snapshot, h.allow_all,
                              (model.CONSOLIDATE,), self.inputs)
        self.assertEqual((), result.moves)
        self.assertEqual(power.plan(
            self.snapshot, h.allow_all, self.inputs.forecasts,
            self.inputs.counters, CONFIG), result.power)
