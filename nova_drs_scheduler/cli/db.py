"""``nova-drs db sync|version``, and the DRS database as commands open it."""

from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import output


def add_parser(subparsers, parents):
    parser = subparsers.add_parser(
        'db', parents=parents,
        help='Create or upgrade the DRS database ([drs_database]), or '
             'show its schema version.',
        description='Like placement-manage db: "sync" creates the DRS '
                    'tables or upgrades them to this release (run it once '
                    'per database, before starting the schedulers); '
                    '"version" prints the revision the database is at.')
    parser.add_argument('action', choices=('sync', 'version'),
                        help='sync: create or upgrade the tables; version: '
                             'print the revision.')
    parser.set_defaults(handler=run)
    return parser


def run(args, conf) -> int:
    from oslo_db import exception as db_exc

    from nova_drs_scheduler.db import migration
    from nova_drs_scheduler.db import store as db_store

    store = db_store.Store(conf)
    try:
        if args.action == 'sync':
            revision = migration.sync(store.engine)
        else:
            revision = migration.version(store.engine)
    except db_exc.DBError as exc:
        raise errors.CLIError(_unreachable(exc), errors.CLOUD)
    finally:
        store.close()
    output.emit(args, {'version': revision, 'head': migration.head()},
                [('', ['version', 'newest'],
                  [[revision or 'none (run nova-drs db sync)',
                    migration.head()]])])
    return errors.OK


def _unreachable(exc) -> str:
    return (f'cannot use the DRS database ([drs_database] connection): '
            f'{exc}')


def open_store(conf):
    """The DRS database, reachable and migrated, or a CLIError."""
    from oslo_db import exception as db_exc

    from nova_drs_scheduler.db import migration
    from nova_drs_scheduler.db import store as db_store

    store = db_store.Store(conf)
    try:
        store.check()
    except db_exc.DBError as exc:
        raise errors.CLIError(_unreachable(exc), errors.CLOUD)
    except migration.NotMigratedError as exc:
        raise errors.CLIError(str(exc), errors.DB_SCHEMA)
    return store
