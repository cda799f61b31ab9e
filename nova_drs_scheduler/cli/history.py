"""``nova-drs history``: recent decisions and their outcomes."""

from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import output
from nova_drs_scheduler.rebalance import record


def add_parser(subparsers, parents):
    parser = subparsers.add_parser(
        'history', parents=parents,
        help='Recent rebalance decisions and their outcomes.',
        description='Reads [drs] history_file, which the scheduler writes.')
    parser.add_argument('--limit', type=int, default=20,
                        help='Newest records to show (default 20).')
    parser.add_argument('--moves-only', action='store_true',
                        help='Only periods that planned a move.')
    parser.set_defaults(handler=run)
    return parser


def load(conf) -> list:
    """The records of ``[drs] history_file``, oldest first."""
    path = conf.drs.history_file
    if not path:
        raise errors.CLIError(
            'history needs [drs] history_file in nova.conf (the scheduler '
            'writes its decision records there).', errors.CONFIG)
    try:
        return record.read_file(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise errors.CLIError(f'cannot read {path}: {exc}', errors.CONFIG)


def moves_rows(rec: dict) -> list:
    return [[rec['time'][:19], output.short(rec['id']),
             output.short(move['instance']), move['source'],
             move['destination'], move.get('outcome', {}).get('status', '-'),
             move.get('reason', '')] for move in rec.get('moves', [])]


def run(args, conf) -> int:
    records = load(conf)
    if args.moves_only:
        records = [rec for rec in records if rec.get('moves')]
    records = records[-args.limit:] if args.limit else records
    periods = [[rec['time'][:19], output.short(rec['id']),
                rec.get('automation'), rec.get('policy'),
                ','.join(h['host'] for h in rec.get('hosts', [])
                         if h.get('violated')) or '-',
                len(rec.get('moves', [])),
                rec.get('skipped') or '; '.join(rec.get('notes', []))[:60]]
               for rec in records]
    moves = [row for rec in records for row in moves_rows(rec)]
    output.emit(args, records, [
        ('Periods', ['time', 'record', 'automation', 'policy', 'violated',
                     'moves', 'skipped / notes'], periods),
        ('Moves', ['time', 'record', 'instance', 'from', 'to', 'outcome',
                   'reason'], moves),
    ])
    return errors.OK
