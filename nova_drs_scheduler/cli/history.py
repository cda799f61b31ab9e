"""``nova-drs history``: recent decisions and their outcomes."""

from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import output


def add_parser(subparsers, parents):
    parser = subparsers.add_parser(
        'history', parents=parents,
        help='Recent rebalance decisions and their outcomes.',
        description='Reads the decision records the leading scheduler '
                    'stores in the DRS database ([drs_database]).')
    parser.add_argument('--limit', type=errors.number(int, minimum=0),
                        default=20,
                        help='Newest records to show (default 20; 0: all).')
    parser.add_argument('--moves-only', action='store_true',
                        help='Only periods that planned a move.')
    parser.set_defaults(handler=run)
    return parser


def load(conf, limit=None, moves_only=False) -> list:
    """The stored records, oldest first."""
    from oslo_db import exception as db_exc

    store = db.open_store(conf)
    try:
        return store.recent(limit, moves_only)
    except db_exc.DBError as exc:
        raise errors.CLIError(f'cannot read the DRS database: {exc}',
                              errors.CLOUD)
    finally:
        store.close()


def _time(rec: dict) -> str:
    return str(rec.get('time') or '-')[:19]


def moves_rows(rec: dict) -> list:
    return [[_time(rec), output.short(rec.get('id')),
             output.server(move.get('instance'),
                           {move.get('instance'): move.get('name')}),
             move.get('source', '-'), move.get('destination', '-'),
             move.get('outcome', {}).get('status', '-'),
             move.get('reason', '')] for move in rec.get('moves', [])]


def run(args, conf) -> int:
    records = load(conf, args.limit or None, args.moves_only)
    periods = [[_time(rec), output.short(rec.get('id')),
                rec.get('automation'), rec.get('policy'),
                ','.join(sorted((h.get('host', '?') for h in
                                 rec.get('hosts', []) if h.get('violated')),
                                key=output.natural)) or '-',
                len(rec.get('moves', [])),
                rec.get('skipped') or '; '.join(rec.get('notes', []))[:60]]
               for rec in records]
    moves = [row for rec in records for row in moves_rows(rec)]
    output.emit(args, records, [
        ('Periods', ['time', 'record', 'automation', 'policy', 'violated',
                     'moves', 'skipped / notes'], periods),
        ('Moves', ['time', 'record', 'server', 'from', 'to', 'outcome',
                   'reason'], moves),
    ])
    return errors.OK
