"""Around the planner: approved recommendations when acting, the late
hosts' instances blocked, the record's plan and attention."""

from unittest import mock

import fixtures

from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.rebalance import candidates
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import period_plan
from nova_drs_scheduler.rebalance import recommendations
from nova_drs_scheduler.rebalance import record
from tests.unit.live import test_rebalancer
from tests.unit.live import test_snapshot_reader


class PlanTest(test_rebalancer.PeriodTestCase):
    """Around the planner: approved recommendations when acting, the
    late hosts' instances blocked, the record's plan and attention."""

    def setUp(self):
        super().setUp()
        self.config(instance_metrics_timeout=7, group='drs')
        self.snapshot = model.Snapshot(
            hosts={'h1': test_snapshot_reader.host('h1')},
            instances=[model.InstanceSnapshot('i1', 'h1', 2, 512, 4.5)],
            config=model.PlannerConfig())
        self.cloud = mock.Mock(instances={})
        self.period.reader.read = mock.Mock(return_value=(
            self.snapshot, self.cloud, mock.sentinel.levels,
            frozenset({'h1'})))
        self.patched = {}
        for module, name in ((recommendations, 'revalidate'),
                             (recommendations, 'approved'),
                             (recommendations, 'reserve'),
                             (planner, 'plan'), (record, 'add_plan'),
                             (record, 'add_not_relieved'),
                             (live, 'needs_attention'),
                             (candidates, 'LiveCandidates')):
            self.patched[name] = self.useFixture(
                fixtures.MockPatchObject(module, name)).mock
        self.approved = [(5, test_rebalancer.move('i0')),
                         (6, test_rebalancer.move('i9'))]
        self.patched['approved'].return_value = self.approved
        self.patched['reserve'].return_value = self.snapshot

    def plan(self, acting, **kwargs):
        rec = {}
        result = period_plan.plan(self.period.reader, mock.sentinel.context,
                                  mock.sentinel.config, rec,
                                  mock.sentinel.windows, acting, set(), {},
                                  **kwargs)
        return rec, result

    def planned_on(self):
        snapshot, cands, goals = self.patched['plan'].call_args.args
        self.assertIs(self.patched['LiveCandidates'].return_value, cands)
        self.assertEqual(planner.GOALS, goals)
        return snapshot

    def test_a_drain_flow_reads_no_more_and_approves_nothing(self):
        rec = {}
        period_plan.plan(self.period.reader, mock.sentinel.context,
                         mock.sentinel.config, rec, mock.sentinel.windows,
                         True, set(), {}, goals=(model.DRAIN,))
        self.assertFalse(
            self.period.reader.read.call_args.kwargs['all_instances'])
        self.patched['revalidate'].assert_not_called()
        self.patched['approved'].assert_not_called()
        self.assertEqual((model.DRAIN,),
                         self.patched['plan'].call_args.args[2])

    def test_the_queued_hosts_go_to_the_snapshot(self):
        period_plan.plan(self.period.reader, mock.sentinel.context,
                         mock.sentinel.config, {}, mock.sentinel.windows,
                         True, {'m1'}, {}, queued=frozenset({'q1'}))
        self.assertEqual(
            ({'m1'}, frozenset({'q1'})),
            (self.period.reader.read.call_args.kwargs['draining'],
             self.period.reader.read.call_args.kwargs['queued']))

    def test_acting_starts_approved_recommendations(self):
        # The instances of the moves checked by the next period measured.
        rec, result = self.plan(acting=True, checking=frozenset({'i7'}))
        self.period.reader.read.assert_called_once_with(
            mock.sentinel.context, mock.sentinel.config,
            mock.sentinel.windows, all_instances=False, draining=set(),
            power_rows={}, queued=frozenset(), checking=frozenset({'i7'}))
        self.patched['revalidate'].assert_called_once_with(
            self.store, self.snapshot)
        self.assertEqual(
            [mock.call(5, db_store.STARTED, (db_store.APPROVED,)),
             mock.call(6, db_store.STARTED, (db_store.APPROVED,))],
            self.store.transition.call_args_list)
        self.patched['reserve'].assert_called_once_with(self.snapshot,
                                                        self.approved)
        self.assertEqual(
            (self.patched['plan'].return_value, self.cloud,
             mock.sentinel.levels, self.approved), result[:4])
        self.assertEqual([record.NOT_MEASURED_BLOCK],
                         [i.blocked for i in self.planned_on().instances])
        self.patched['add_not_relieved'].assert_called_once_with(
            rec, self.patched['plan'].return_value, frozenset({'h1'}), 7)
        self.assertEqual(self.patched['needs_attention'].return_value,
                         rec['attention'])

    def test_the_host_managers_freeze_runs_before_planning(self):
        calls = mock.Mock()
        self.period.reader.host_manager = calls.host_manager
        calls.attach_mock(self.patched['plan'], 'plan')
        self.plan(acting=True)
        self.assertEqual(['host_manager.freeze', 'plan'],
                         [name for name, _args, _kwargs in calls.mock_calls])

    def test_a_dry_run_reads_every_instance_and_no_recommendation(self):
        _rec, result = self.plan(acting=False)
        self.period.reader.read.assert_called_once_with(
            mock.sentinel.context, mock.sentinel.config,
            mock.sentinel.windows, all_instances=True, draining=set(),
            power_rows={}, queued=frozenset(), checking=frozenset())
        for name in ('revalidate', 'approved', 'reserve'):
            self.patched[name].assert_not_called()
        self.store.transition.assert_not_called()
        self.assertEqual([], result[3])

    def test_the_hosts_in_maintenance_and_power_states_passed_on(self):
        rows = {'h2': {'state': model.ENTERING}}
        period_plan.plan(self.period.reader, mock.sentinel.context,
                         mock.sentinel.config, {}, mock.sentinel.windows,
                         True, {'h1'}, rows)
        self.assertEqual(
            ({'h1'}, rows),
            (self.period.reader.read.call_args.kwargs['draining'],
             self.period.reader.read.call_args.kwargs['power_rows']))

    def test_only_the_whole_pipeline_reads_all_and_approves(self):
        # Goals compared by value: a pipeline equal to the planner's, built
        # apart, is the whole one; any other goal set is not.
        whole = tuple(list(planner.GOALS))
        for goals, expected in ((whole, True), ((model.LEVEL,), False),
                                ((model.DRAIN,), False)):
            for acting in (False, True):
                self.period.reader.read.reset_mock()
                self.patched['approved'].reset_mock()
                period_plan.plan(self.period.reader, mock.sentinel.context,
                                 mock.sentinel.config, {},
                                 mock.sentinel.windows, acting, set(), {},
                                 goals=goals)
                self.assertEqual(
                    expected and not acting,
                    self.period.reader.read.call_args.kwargs[
                        'all_instances'])
                self.assertEqual(expected and acting,
                                 self.patched['approved'].called)
