"""``nova-drs recommendations``, ``apply`` and ``dismiss``: the operator's
side of ``manual`` automation (see :mod:`.rebalance.recommendations`)."""

from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import output


def add_parsers(subparsers, parents) -> dict:
    parsers = {
        'recommendations': subparsers.add_parser(
            'recommendations', parents=parents,
            help='Moves the rebalancer recommends (automation manual), '
                 'hosts power management recommends to put in standby or '
                 'wake (power_management manual), and what became of '
                 'them.',
            description='Lists the recommendations the leading scheduler '
                        'stored in the DRS database: pending and approved '
                        'ones, and with --all the ended ones too.'),
        'apply': subparsers.add_parser(
            'apply', parents=parents,
            help='Approve recommendations: the leading scheduler starts '
                 'them at its next period, through its usual rails.',
            description='Approves one pending recommendation (ID) or all '
                        'of them; nova-drs migrates nothing itself, the '
                        'leading scheduler starts approved moves at its '
                        'next period unless they are no longer valid.'),
        'dismiss': subparsers.add_parser(
            'dismiss', parents=parents,
            help='Dismiss a pending recommendation.',
            description='Dismisses a pending or approved recommendation: '
                        'the scheduler will not start it.'),
    }
    parsers['recommendations'].add_argument(
        '--all', action='store_true',
        help='Also the ended ones (completed, failed, dismissed, '
             'expired), as long as they are kept.')
    target = parsers['apply'].add_mutually_exclusive_group(required=True)
    target.add_argument('ident', metavar='ID', nargs='?', type=int,
                        help='Recommendation to approve.')
    target.add_argument('--all', action='store_true',
                        help='Approve every pending recommendation.')
    parsers['dismiss'].add_argument('ident', metavar='ID', type=int,
                                    help='Recommendation to dismiss.')
    for name, handler in (('recommendations', show), ('apply', apply),
                          ('dismiss', dismiss)):
        parsers[name].set_defaults(handler=handler)
    return parsers


def _call(conf, method, *args):
    from oslo_db import exception as db_exc

    from nova_drs_scheduler.db import store as db_store

    store = db.open_store(conf)
    try:
        return getattr(store, method)(*args)
    except db_exc.DBError as exc:
        raise errors.CLIError(f'cannot use the DRS database: {exc}',
                              errors.CLOUD)
    except (db_store.NotFoundError, db_store.InvalidStateError) as exc:
        raise errors.CLIError(str(exc), errors.USAGE)
    finally:
        store.close()


def show(args, conf) -> int:
    from nova_drs_scheduler.db import store as db_store

    found = _call(conf, 'recommendations',
                  None if args.all else db_store.OPEN)
    rows = [[r['id'], r['state'], r.get('action') or 'migrate',
             r['instance'] or '-', r['source'], r['destination'] or '-',
             str(r['updated_at'])[:19], r['detail'] or r['reason']]
            for r in found]
    output.emit(args, found, [(
        'Recommendations', ['id', 'state', 'action', 'instance', 'host',
                            'to', 'updated', 'why'], rows)])
    return errors.OK


def apply(args, conf) -> int:
    from nova_drs_scheduler.db import store as db_store

    ids = _call(conf, 'transition', None if args.all else args.ident,
                db_store.APPROVED)
    output.emit(args, {'approved': ids}, [(
        'Approved; the leading scheduler starts them at its next period',
        ['id'], [[i] for i in ids])])
    return errors.OK


def dismiss(args, conf) -> int:
    from nova_drs_scheduler.db import store as db_store

    ids = _call(conf, 'transition', args.ident, db_store.DISMISSED,
                (db_store.PENDING, db_store.APPROVED))
    output.emit(args, {'dismissed': ids}, [('Dismissed', ['id'],
                                            [[i] for i in ids])])
    return errors.OK
