"""``nova-drs history``: recent decisions and their outcomes, and
whether the moves bought the relief their plan expected."""

from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import output
from nova_drs_scheduler.planning import relief


def add_parser(subparsers, parents):
    parser = subparsers.add_parser(
        'history', parents=parents,
        help='Recent rebalance decisions, their outcomes and the relief '
             'each move bought.',
        description='Reads the decision records the leading scheduler '
                    'stores in the DRS database ([drs_database]): each '
                    'move with its outcome, the relief it was expected to '
                    'buy and its cost, and the relief it really bought as '
                    'checked [drs] relief_check_delay after it completed; '
                    'then how often the expectation held, and how often '
                    'the moved load stayed.')
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


def _pair(first, second) -> str:
    if first is None and second is None:
        return '-'
    return f'{output.number(first)} / {output.number(second)}'


def expected_relief(move: dict) -> str:
    """``relief / cost`` in core-minutes, as the plan expected them."""
    expected = move.get('expected') or {}
    return _pair(expected.get('relief'), expected.get('cost'))


def checked_relief(move: dict) -> list[str]:
    """Points bought / expected on the source, the destination's CPU /
    threshold, held: what the relief check found ('-' before it)."""
    found = move.get('relief_check') or {}
    if 'held' not in found:
        return [found.get('status', '-'), '-', '-']
    return [_pair(found.get('relief_points'), found.get('expected_points')),
            _pair(found.get('destination_cpu'),
                  found.get('destination_threshold')),
            'yes' if found['held'] else 'no']


def relief_summary(records: list) -> str:
    """How often the checked moves among ``records`` bought what their
    plan expected, and, of those whose instance's load was read at the
    check, how often the moved load stayed."""
    found = [move['relief_check'] if 'held' in (
        move.get('relief_check') or {}) else None
        for rec in records for move in rec.get('moves', [])]
    held, checked = relief.held_share(found)
    line = f'relief checked for {checked} move{"" if checked == 1 else "s"}'
    if checked:
        line += (f': the expectation held for {held} '
                 f'({100.0 * held / checked:.0f} %)')
    loads = [check['load_stayed'] for check in found
             if check is not None and check.get('load_stayed') is not None]
    if loads:
        stayed = sum(1 for value in loads if value)
        line += (f'; the moved load stayed for {stayed} of {len(loads)} '
                 f'({100.0 * stayed / len(loads):.0f} %)')
    return line


def moves_rows(rec: dict) -> list:
    return [[_time(rec), output.short(rec.get('id')),
             output.server(move.get('instance'),
                           {move.get('instance'): move.get('name')}),
             move.get('source', '-'), move.get('destination', '-'),
             move.get('outcome', {}).get('status', '-'),
             expected_relief(move), *checked_relief(move),
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
                   'relief / cost\n(core-min)', 'points bought\n/ expected',
                   'to cpu\n/ threshold', 'held', 'reason'], moves),
    ])
    if not args.json:
        print(relief_summary(records))
    return errors.OK
