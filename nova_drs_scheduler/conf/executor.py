"""Options of the live rebalancer's executor and decision records."""

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
    cfg.IntOpt(
        'history_size',
        default=100,
        min=1,
        help='Number of recent decision records kept in memory for '
             '``nova-drs history`` and ``explain``.'),
    cfg.StrOpt(
        'history_file',
        help='Optional JSON-lines file where each decision record (and each '
             'later outcome update) is appended, so that tools in another '
             'process can read the recent history. It is trimmed to about '
             '``history_size`` records. Unset keeps records in memory and '
             'in the log only.'),
]


def list_opts():
    return {utilization.drs_group: OPTS}
