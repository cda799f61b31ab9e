"""The cost-benefit rail at the working projection: what it reads of each
host (load, usual level, spread, contention, RAM over its threshold) before
:mod:`benefit`'s rule weighs the move."""

import testtools

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import cost_benefit
from nova_drs_scheduler.planning import policies
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.policies import base
from tests import snapshots as h


def work(hosts, instances=(), **config):
    snap = h.snapshot(hosts, instances, **config)
    return working.Working(snap, h.allow_all, policies.get(
        snap.config.policy))


class OverTest(testtools.TestCase):
    """``_over``: points over the threshold that a move takes off."""

    def test_points_over_the_threshold_taken_off(self):
        self.assertEqual(5.0, cost_benefit._over(90.0, 85.0, 80.0))
        self.assertEqual(10.0, cost_benefit._over(90.0, 70.0, 80.0))

    def test_nothing_when_the_host_was_under(self):
        self.assertEqual(0.0, cost_benefit._over(75.0, 70.0, 80.0))

    def test_nothing_when_either_is_unknown(self):
        self.assertEqual(0.0, cost_benefit._over(None, 70.0, 80.0))
        self.assertEqual(0.0, cost_benefit._over(90.0, None, 80.0))


class KnownTest(testtools.TestCase):

    def test_value_then_default_then_zero(self):
        self.assertEqual(3.0, cost_benefit._known(3.0, 5.0))
        self.assertEqual(5.0, cost_benefit._known(None, 5.0))
        self.assertEqual(0.0, cost_benefit._known(None, None))


class LoadTest(testtools.TestCase):
    """``_load``: a host's load as the rule sees it."""

    def test_measured_host(self):
        source = h.host('a', 90.0, cpu_expected=70.0, cpu_deviation=4.0)
        self.assertEqual(benefit.Load(90.0, 70.0, 4.0),
                         cost_benefit._load(work([source]), source))

    def test_unknowns_count_as_none(self):
        # No usual level, spread or contention: the current load alone.
        source = h.host('a', 90.0)
        self.assertEqual(benefit.Load(90.0, 90.0, 0.0),
                         cost_benefit._load(work([source]), source))

    def test_contention_adds_to_the_current_load_only(self):
        source = h.host('a', 100.0, cpu_expected=95.0, cpu_contention=20.0)
        self.assertEqual(benefit.Load(120.0, 95.0, 0.0),
                         cost_benefit._load(work([source]), source))

    def test_planned_moves_shift_the_usual_level_as_the_current(self):
        source = h.host('a', 90.0, cpu_expected=70.0)
        w = work([source])
        w.cpu['a'] = 80.0
        self.assertEqual(benefit.Load(80.0, 60.0, 0.0),
                         cost_benefit._load(w, source))

    def test_unsampled_host_shifts_from_nothing(self):
        # A host without a sample (one being drained) is projected from 0.
        source = h.host('a', None)
        w = work([source])
        w.cpu['a'] = 10.0
        self.assertEqual(benefit.Load(10.0, 10.0, 0.0),
                         cost_benefit._load(w, source))


class EstimateTest(testtools.TestCase):
    """``estimate``: the rule on or off, and RAM relief counted."""

    def option(self, w, ram=None):
        source, dest = w.hosts['src'], w.hosts['dst']
        instance = h.instance('i1', 'src', 2.0, memory_mb=1000)
        removal = w.removal(source, instance)
        cpu, ram_after = w.project(dest, 2.0, 1000)
        return source, base.Option(removal, dest, cpu, ram_after,
                                   base.pressure(dest, cpu, ram_after))

    def hosts(self, ram=None):
        return [h.host('src', 95.0, ram=ram, cpu_expected=95.0),
                h.host('dst', 20.0, ram=None if ram is None else 10.0,
                       cpu_expected=20.0)]

    def test_off_at_a_zero_horizon(self):
        w = work(self.hosts(), benefit_horizon=0)
        self.assertIsNone(cost_benefit.estimate(w, *self.option(w)))

    def test_on_from_one_second(self):
        w = work(self.hosts(), benefit_horizon=1)
        self.assertIsNotNone(cost_benefit.estimate(w, *self.option(w)))

    def test_off_for_a_policy_that_does_not_weigh_it(self):
        w = work(self.hosts(), policy='seed')
        self.assertIsNone(cost_benefit.estimate(w, *self.option(w)))

    def test_ram_over_its_threshold_adds_its_relief(self):
        # src at 95 % RAM (threshold 90): the 1000 MB instance takes 10
        # points off, 5 of them over the threshold; they weigh as CPU
        # points over the whole horizon (10 vCPUs: a point is 0.1 core).
        horizon = 3600
        w = work(self.hosts(), benefit_horizon=horizon)
        without = cost_benefit.estimate(w, *self.option(w))
        w = work(self.hosts(ram=95.0), benefit_horizon=horizon)
        with_ram = cost_benefit.estimate(w, *self.option(w))
        self.assertAlmostEqual(5.0 * 0.1 * horizon / 60.0,
                               with_ram.relief - without.relief)
        self.assertEqual(without.risk, with_ram.risk)
