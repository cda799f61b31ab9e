"""The working projection's judgement of hosts and its limits."""

from unittest import mock

import testtools

from nova_drs_scheduler.planning import benefit
from nova_drs_scheduler.planning import cost_benefit
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import policies
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.planning.policies import base
from tests import snapshots as h


def work(hosts, instances=(), inflight_total=0, **config):
    snap = h.snapshot(hosts, instances, inflight_total=inflight_total,
                      **config)
    return working.Working(snap, h.allow_all,
                           policies.get(snap.config.policy))


class JudgeTest(testtools.TestCase):
    """Hosts power management holds out are never violated, however hot."""

    def judge(self, power):
        return working.judge(h.host('a', 99.0, counter=9, power=power),
                             model.PlannerConfig())

    def test_entering_standby(self):
        verdict, rule = self.judge(model.ENTERING)
        self.assertFalse(verdict.violated)
        self.assertEqual('entering standby: draining, not judged',
                         verdict.reason)
        self.assertEqual('standby', rule)

    def test_a_state_read_from_the_database_is_the_same_state(self):
        # Equal, not the same object as the constant.
        verdict, rule = self.judge(''.join(['enter', 'ing']))
        self.assertEqual(('standby', False), (rule, verdict.violated))

    def test_in_standby_or_waking(self):
        for power in (model.STANDBY, model.WAKING):
            verdict, rule = self.judge(power)
            self.assertFalse(verdict.violated)
            self.assertEqual(f'power {power}: not judged', verdict.reason)
            self.assertEqual('powered-off', rule)


class RemovalTest(testtools.TestCase):

    def test_a_host_without_a_sample_empties_from_nothing(self):
        w = work([h.host('a', None, draining=True)])
        removal = w.removal(w.hosts['a'], h.instance('i', 'a', 0.0))
        self.assertEqual(0.0, removal.cpu)
        self.assertEqual(base.pressure(w.hosts['a'], 0.0, None),
                         removal.before)


class LimitTest(testtools.TestCase):
    """``Working.limit``: the per-period budget is balancing's, and drains
    leave a slot of the total to each violated host."""

    def violated(self, count, **config):
        return [h.host(f'v{n}', 95.0, counter=9) for n in range(count)] + [
            h.host('d', None, draining=True)]

    def test_drain_moves_are_outside_the_period_budget(self):
        w = work(self.violated(1), max_migrations_per_period=2,
                 max_concurrent_migrations=10)
        w.moves, w.drain_moves = [None, None], 1
        self.assertIsNone(w.limit('v0'))
        w.moves, w.drain_moves = [None, None, None], 0
        self.assertEqual('limit:per-period', w.limit('v0'))

    def test_drains_leave_each_violated_host_a_slot(self):
        # 10 in total, 2 violated hosts, 2 a period: drains stop at 8.
        hosts = self.violated(2)
        config = dict(max_migrations_per_period=2,
                      max_concurrent_migrations=10)
        for inflight, found in ((5, None), (7, None),
                                (8, working.DRAIN_SHARE),
                                (9, working.DRAIN_SHARE)):
            w = work(hosts, inflight_total=inflight, **config)
            self.assertEqual(found, w.limit('d', drain=True), inflight)

    def test_the_drain_share_is_one_slot_under_the_total_at_most(self):
        # 6 violated hosts, 6 a period, 10 in total: drains stop at 4.
        w = work(self.violated(6), inflight_total=4,
                 max_migrations_per_period=6, max_concurrent_migrations=10)
        self.assertEqual(working.DRAIN_SHARE, w.limit('d', drain=True))
        w = work(self.violated(6), inflight_total=3,
                 max_migrations_per_period=6, max_concurrent_migrations=10)
        self.assertIsNone(w.limit('d', drain=True))


class RecordedEstimateTest(testtools.TestCase):

    def test_relief_and_costs_recorded_to_a_thousandth(self):
        found = benefit.Estimate(relief=9.87654, risk=0.12345,
                                 migration=0.04321)
        with mock.patch.object(cost_benefit, 'estimate',
                               return_value=found):
            result = planner.plan(
                h.snapshot([h.host('hot', 95.0, counter=3),
                            h.host('cold', 10.0)],
                           [h.instance('i1', 'hot', 2.0)]), h.allow_all)
        expected = result.moves[0].expected
        self.assertEqual((9.877, 0.167, 0.123, 0.043),
                         (expected['relief'], expected['cost'],
                          expected['risk'], expected['migration_cost']))
