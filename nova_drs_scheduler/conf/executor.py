"""Options of the live rebalancer's executor."""

from oslo_config import cfg

from nova_drs_scheduler.conf import utilization

OPTS = [
    cfg.IntOpt(
        'quarantine_time',
        default=3600,
        min=0,
        help='Seconds during which an instance whose DRS live migration '
             'failed is not moved again by the rebalancer. Derived from '
             'Nova\'s migration records, so a scheduler restart does not '
             'forget it. 0 disables the quarantine.'),
    cfg.IntOpt(
        'migration_timeout',
        default=1800,
        min=1,
        help='Seconds after which the rebalancer stops following a live '
             'migration it started and records its outcome as timed out. '
             'Nova keeps driving the migration: while Nova reports it in '
             'progress it counts as in flight and its instance is not '
             'moved; then the cooldown or the quarantine applies as Nova\'s '
             'final status says. A migration record not updated for longer '
             'than this, ``instance_cooldown`` and ``quarantine_time`` is '
             'taken as stale and no longer counted as in flight.'),
    cfg.StrOpt(
        'history_file',
        deprecated_for_removal=True,
        deprecated_since='2026.2',
        deprecated_reason='Decision records live in the DRS database '
                          '(``[drs_database]``); the scheduler imports '
                          'this file into it once, at its first start.',
        help='JSON-lines file of decision records written by earlier '
             'releases. When set, the scheduler imports its records into '
             'the DRS database once (if the database holds none yet) and '
             'no longer writes it.'),
]


def list_opts():
    return {utilization.drs_group: OPTS}
