"""``[drs_database]``: the DRS database, and ``[drs]`` retention options.

The connection and its friends are oslo.db's own options, registered in a
group of our own (without their deprecated aliases, which would read
Nova's ``[DEFAULT] sql_connection``): DRS never touches Nova's schemas.
"""

import copy
import os

from oslo_config import cfg
from oslo_db import options as db_options

from nova_drs_scheduler.conf import utilization

drs_database_group = cfg.OptGroup(
    'drs_database',
    title='DRS database',
    help='The database holding nova-drs-scheduler\'s shared state: '
         'per-host windows and counters, decision records and '
         'recommendations. Create or upgrade it with ``nova-drs db sync``. '
         'Several schedulers (and the ``nova-drs`` command on any host) '
         'must point at the same database, e.g. a ``nova_drs`` database '
         'on the MySQL/MariaDB server Nova uses.')

#: The database used when ``connection`` is unset, under Nova's
#: ``[DEFAULT] state_path`` (read only then: the simulator has no Nova).
DEFAULT_FILE = 'nova_drs.sqlite'


def _database_opts():
    opts = []
    for opt in db_options.database_opts:
        opt = copy.deepcopy(opt)
        opt.deprecated_opts = []
        if opt.name == 'connection':
            opt.help = (
                'SQLAlchemy URL of the DRS database, e.g. '
                '``mysql+pymysql://nova_drs:SECRET@db/nova_drs``. Unset, '
                f'it is the SQLite file ``$state_path/{DEFAULT_FILE}``, '
                'which suits one scheduler host and is created by the '
                'scheduler itself; with several schedulers use a '
                'database every scheduler and every ``nova-drs`` host '
                'reaches. Never one of Nova\'s own databases.')
        opts.append(opt)
    return opts


DATABASE_OPTS = _database_opts()

RETENTION_OPTS = [
    cfg.IntOpt(
        'history_size',
        default=1000,
        min=1,
        help='Maximum number of decision records kept in the DRS '
             'database; the leader purges older ones every period.'),
    cfg.IntOpt(
        'history_max_age',
        default=7 * 24 * 3600,
        min=60,
        help='Seconds a decision record (and an ended recommendation) is '
             'kept in the DRS database; the leader purges older ones every '
             'period.'),
]


def list_opts():
    return {drs_database_group: DATABASE_OPTS,
            utilization.drs_group: RETENTION_OPTS}


def settings(conf) -> dict:
    """``[drs_database]`` as keyword arguments of oslo.db's enginefacade."""
    found = dict(conf.drs_database.items())
    if not found['connection']:
        found['connection'] = 'sqlite:///' + os.path.join(
            conf.state_path, DEFAULT_FILE)
    return found
