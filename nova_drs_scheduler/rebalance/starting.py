"""A plan's moves, started or stored as recommendations.

What starts depends on the automation level of the move's source host
(``automatic``: started; ``manual``: recommended for an operator), but a
drain starts at any level, and so does a recommendation an operator
approved.  The decision record is stored before anything starts, so a
scheduler killed midway leaves a record its successor completes.
"""

from oslo_log import log as logging

from nova_drs_scheduler import conf
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import live
from nova_drs_scheduler.rebalance import outcomes as outcomes_mod
from nova_drs_scheduler.rebalance import record

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class Starter:
    """Starts a period's moves through the outcomes' executor."""

    def __init__(self, store, telemetry, outcomes: outcomes_mod.Outcomes):
        self.store = store
        self.telemetry = telemetry
        self.outcomes = outcomes

    def dispatch(self, rec: dict, plan: model.Plan, levels: dict,
                 approved: list) -> list:
        """Store as recommendations the moves that wait for an operator;
        return those to start now: ``[(move, what its outcomes carry)]``.

        ``levels``: the automation level by host; ``approved``: the
        approved recommendations taken up, ``[(id, move)]``.
        """
        starting = []
        for ident, move in approved:
            record.add_move(rec, move, {'status': 'starting',
                                        'recommendation': ident})
            starting.append((move, {'recommendation': ident}))
        for move in plan.moves:
            # A drain is started at any level: ``maintenance enter`` was
            # the operator's approval.
            if move.goal == model.DRAIN or levels.get(
                    move.source, CONF.drs.automation) == 'automatic':
                record.set_outcome(rec, move.instance,
                                   {'status': 'starting'})
                starting.append((move, {}))
            else:
                ident = self.store.recommend(rec['id'], record.move_of(
                    rec, move.instance))
                record.set_outcome(rec, move.instance, {
                    'status': 'recommended', 'recommendation': ident})
        return starting

    def start(self, rec: dict, plan: model.Plan, cloud: live.Cloud,
              starting: list) -> None:
        """Store the record, then start ``starting`` (``[(move, what its
        outcomes carry)]``) and record how each began."""
        # Stored before anything starts: a scheduler killed from here on
        # leaves a record its successor completes (``Outcomes``).
        self.store.add(rec)
        self.telemetry.moves('planned', len(plan.moves))
        for move, extra in starting:
            outcome = dict(self.outcomes.executor.start(
                rec['id'], move, cloud.instances[move.instance].cell),
                **extra)
            self.outcomes.save(rec['id'], move.instance, outcome)
            record.set_outcome(rec, move.instance, outcome)
        self.store.purge(CONF.drs.history_size, CONF.drs.history_max_age)
        _log_period(rec)
        # Moves that already ended (or failed at once) complete the record.
        self.outcomes.collect()


def _log_period(rec: dict) -> None:
    """One INFO line per period; every host's verdict at DEBUG."""
    for verdict in rec['hosts']:
        LOG.debug('DRS host %s: %s', verdict['host'], verdict['reason'])
    judged = [v for v in rec['hosts'] if v.get('cpu_percent') is not None]
    violated = sorted(v['host'] for v in rec['hosts'] if v['violated'])
    moves = ', '.join(
        f'{m["instance"]} {m["source"]}->{m["destination"]} '
        f'{m["outcome"]["status"]}' for m in rec['moves'])
    LOG.info('DRS period %s (%s): %d hosts, %d judged, %d over, '
             '%d violated%s; %d move(s)%s', rec['id'], rec['automation'],
             len(rec['hosts']), len(judged),
             sum(1 for v in judged if v.get('counter')), len(violated),
             f' ({", ".join(violated)})' if violated else '',
             len(rec['moves']), f': {moves}' if moves else '')
