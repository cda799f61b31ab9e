"""nova_drs_scheduler.testing.records on records shaped as the rebalancer
writes them (rebalance/record.py)."""

import testtools

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import record as rec
from nova_drs_scheduler.testing import records


def _record():
    plan = model.Plan(
        moves=[model.Move(
            instance='vm1', source='h1', destination='h3', reason='hot',
            expected={'source_cpu': 50.0, 'destination_cpu': 40.0},
            rejected=[model.Rejection('h2', 'margin', 'projected cpu 85%')])],
        hosts=[model.HostVerdict('h1', True, 'over'),
               model.HostVerdict('h2', False, 'ok'),
               model.HostVerdict('h3', False, 'ok')])
    record = rec.new_record('automatic', model.PlannerConfig())
    snapshot = model.Snapshot(hosts={}, instances=[],
                              config=model.PlannerConfig())
    rec.add_plan(record, snapshot, plan)
    return record


class RecordsTest(testtools.TestCase):

    def test_verdicts_moves_and_rejections(self):
        record = _record()
        self.assertEqual(['h1'], records.violated_hosts(record))
        self.assertEqual('ok', records.verdict(record, 'h2')['reason'])
        move = records.move(record, 'vm1')
        self.assertEqual('h3', move['destination'])
        self.assertEqual('margin', records.rejection(move, 'h2')['rule'])
        self.assertRaises(KeyError, records.verdict, record, 'h9')
        self.assertRaises(KeyError, records.move, record, 'vm9')
        self.assertRaises(KeyError, records.rejection, move, 'h1')

    def test_outcome_life_cycle(self):
        record = _record()
        move = records.move(record, 'vm1')
        self.assertEqual('planned', records.outcome(move)['status'])
        rec.set_outcome(record, 'vm1', {'status': 'started',
                                        'migration': 'm1'})
        self.assertFalse(records.is_final(move))
        self.assertEqual([move], records.moves_with_status(record,
                                                           'started'))
        rec.set_outcome(record, 'vm1', {'status': 'completed',
                                        'migration': 'm1'})
        self.assertTrue(records.is_final(move))
        self.assertEqual([], records.moves_with_status(record, 'started'))

    def test_manual_recommendations_are_final(self):
        record = _record()
        rec.set_outcome(record, 'vm1', {'status': 'recommended'})
        self.assertTrue(records.is_final(records.move(record, 'vm1')))
