"""Decision records and their bounded history."""

import datetime
import json

import testtools
from oslo_utils import fixture as utils_fixture
from oslo_utils import uuidutils

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import record
from tests import snapshots as h


def plan_record(instance='i1'):
    snapshot = model.Snapshot(hosts={}, instances=[],
                              config=model.PlannerConfig())
    plan = model.Plan(
        moves=[model.Move(instance=instance, source='h1', destination='h2',
                          reason='cpu', expected={'source_cpu': 50.0})],
        hosts=[model.HostVerdict(host='h1', violated=True, reason='cpu',
                                 counter=3, window=(90, 95))])
    rec = record.new_record('automatic', snapshot.config)
    record.add_plan(rec, snapshot, plan)
    return rec


class RecordTest(testtools.TestCase):

    def test_each_host_says_which_view_judged_it(self):
        hosts = {'h1': model.HostSnapshot('h1', 8, 1024, 100.0, None),
                 'h2': model.HostSnapshot('h2', 8, 1024, 70.0, None,
                                          cpu_contention=0.4)}
        snapshot = model.Snapshot(hosts=hosts, instances=[],
                                  config=model.PlannerConfig())
        plan = model.Plan(moves=[], hosts=[
            model.HostVerdict(host=name, violated=False, reason='')
            for name in ('h1', 'h2', 'gone')])
        rec = record.new_record('automatic', snapshot.config)
        record.add_plan(rec, snapshot, plan)
        self.assertEqual(
            [('cpu', None, True), ('contention', 0.4, False), None],
            [(v['view'], v['cpu_contention'], v['starved'])
             if 'view' in v else None for v in rec['hosts']])
        json.dumps(rec)

    def test_plan_copied_with_planned_outcome(self):
        rec = plan_record()
        self.assertEqual('h2', rec['moves'][0]['destination'])
        self.assertEqual({'status': 'planned'}, rec['moves'][0]['outcome'])
        self.assertEqual([90, 95], list(rec['hosts'][0]['window']))
        json.dumps(rec)

    def test_added_move_carries_its_outcome(self):
        rec = plan_record()
        record.add_move(rec, model.Move('i9', 'h1', 'h3', 'approved', {}),
                        {'status': 'starting'})
        self.assertEqual('h3', record.move_of(rec, 'i9')['destination'])
        self.assertEqual('starting',
                         record.move_of(rec, 'i9')['outcome']['status'])
        json.dumps(rec)


class RecordContentTest(testtools.TestCase):
    """What the record says beyond the plan: its header, the period's
    in-flight migrations and blocked instances, the outcomes."""

    def setUp(self):
        super().setUp()
        self.clock = self.useFixture(utils_fixture.TimeFixture(
            datetime.datetime(2026, 11, 1, 12, 0)))

    def test_new_record_header(self):
        config = model.PlannerConfig(policy='seed', mode='aggregate')
        rec = record.new_record('manual', config)
        self.assertTrue(uuidutils.is_uuid_like(rec.pop('id')))
        self.assertEqual(
            {'time': '2026-11-01T12:00:00', 'automation': 'manual',
             'policy': 'seed', 'mode': 'aggregate', 'skipped': None,
             'hosts': [], 'moves': [], 'notes': []}, rec)
        self.assertNotEqual(rec, record.new_record('manual', config))

    def test_plan_with_in_flight_blocked_and_names(self):
        snapshot = model.Snapshot(
            hosts={}, config=model.PlannerConfig(),
            instances=[model.InstanceSnapshot('i1', 'h1', 2, 512, 1.0,
                                              name='web'),
                       model.InstanceSnapshot('i2', 'h1', 2, 512, 1.0,
                                              blocked='cooldown'),
                       model.InstanceSnapshot('i3', 'h1', 2, 512, 1.0)],
            inflight_by_host={'h1': 1}, inflight_total=1)
        plan = model.Plan(
            moves=[model.Move('i1', 'h1', 'h2', 'cpu', {}),
                   model.Move('i3', 'h1', 'h2', 'cpu', {}),
                   model.Move('gone', 'h1', 'h2', 'cpu', {})],
            hosts=[], notes=('n1',), policy='balanced')
        rec = record.new_record('automatic', snapshot.config)
        record.add_plan(rec, snapshot, plan)
        self.assertEqual({'total': 1, 'by_host': {'h1': 1}}, rec['inflight'])
        self.assertEqual({'i2': 'cooldown'}, rec['blocked'])
        self.assertEqual(['web', '', ''], [m['name'] for m in rec['moves']])
        self.assertEqual(['n1'], rec['notes'])
        self.assertEqual('balanced', rec['policy'])
        json.dumps(rec)

    def test_outcome_is_timed_and_only_for_a_move_of_the_record(self):
        rec = plan_record('i1')
        self.clock.advance_time_delta(datetime.timedelta(seconds=90))
        self.assertTrue(record.set_outcome(rec, 'i1', {'status': 'done'}))
        self.assertEqual({'status': 'done', 'time': '2026-11-01T12:01:30'},
                         record.move_of(rec, 'i1')['outcome'])
        self.assertFalse(record.set_outcome(rec, 'i9', {'status': 'x'}))
        self.assertRaises(StopIteration, record.move_of, rec, 'i9')

    def test_outcome_finds_the_move_of_its_instance_among_others(self):
        rec = plan_record('i2')
        record.add_move(rec, model.Move('i1', 'h1', 'h3', 'approved', {}),
                        {'status': 'starting'})
        # The uuid as read back (from the database): equal, not identical.
        self.assertTrue(record.set_outcome(rec, h.fresh('i1'),
                                           {'status': 'started'}))
        self.assertEqual(['planned', 'started'],
                         [m['outcome']['status'] for m in rec['moves']])
        self.assertEqual('h3', record.move_of(rec, h.fresh('i1'))[
            'destination'])

    def test_not_relieved_lists_late_violated_hosts_only(self):
        plan = model.Plan(moves=[], hosts=[
            model.HostVerdict('hot', True, 'cpu'),
            model.HostVerdict('late-ok', False, ''),
            model.HostVerdict('measured-hot', True, 'cpu')])
        rec = {}
        record.add_not_relieved(rec, plan, {'hot', 'late-ok'}, 10.0)
        self.assertEqual(
            [{'subject': 'hot', 'rule': 'instance_metrics_timeout',
              'detail': 'CPU of its instances not measured within 10 s: '
                        'not relieved this period'}], rec['not_relieved'])
