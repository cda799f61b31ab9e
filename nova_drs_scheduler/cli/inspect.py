"""``nova-drs plan``, ``explain`` and ``status``: the live view.

All three read one dry-run period (:func:`.cloud.dry_run`): what the
rebalancer would decide now, and why.
"""

from nova_drs_scheduler.cli import cloud
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import output


def add_parsers(subparsers, parents) -> dict:
    """``plan``, ``explain`` and ``status``; returns their parsers."""
    helps = {
        'plan': 'Dry run: what would move now, and why.',
        'explain': 'Why a host is or is not violated; why an instance '
                   'would or would not move, and which filter or rule '
                   'rejected each destination.',
        'status': 'Every host\'s window, counter, pool, threshold and '
                  'state; migrations in flight, cooldowns and quarantines; '
                  'instances a DRS move left in ERROR.',
    }
    handlers = {'plan': plan, 'explain': explain, 'status': status}
    parsers = {}
    for name, text in helps.items():
        parsers[name] = subparsers.add_parser(name, parents=parents,
                                              help=text)
        parsers[name].set_defaults(handler=handlers[name])
    parsers['explain'].add_argument(
        'subject', metavar='HOST|INSTANCE',
        help='A compute host name or an instance UUID.')
    return parsers


def _state(verdict: dict) -> str:
    if verdict.get('violated'):
        return 'VIOLATED'
    if verdict.get('cpu_percent') is None:
        return 'not judged'
    return 'over' if verdict.get('counter') else 'ok'


def _hosts_table(record: dict):
    rows = [[v['host'], v.get('pool') or '-', output.percent(
        v.get('cpu_percent')), output.percent(v.get('ram_percent')),
        ' '.join(f'{s:.0f}' for s in v.get('window') or ()) or '-',
        v.get('counter', 0), output.percent(v.get('cpu_threshold')),
        _state(v), v.get('reason', '')]
        for v in record.get('hosts', [])]
    return ('Hosts', ['host', 'pool', 'cpu %', 'ram %', 'window', 'counter',
                      'cpu thr', 'state', 'why'], rows)


def _moves_table(record: dict):
    rows = [[output.short(m['instance']), m['source'], m['destination'],
             output.percent(m['expected'].get('source_cpu')),
             output.percent(m['expected'].get('destination_cpu')),
             m.get('reason', '')] for m in record.get('moves', [])]
    return ('Moves', ['instance', 'from', 'to', 'from cpu after',
                      'to cpu after', 'why'], rows)


def _skipped(record: dict):
    if record.get('skipped'):
        raise errors.CLIError(f'no plan: {record["skipped"]}', errors.CLOUD)


def plan(args, conf) -> int:
    record = cloud.dry_run(conf)
    _skipped(record)
    notes = [('Notes', ['note'], [[n] for n in record.get('notes', [])])]
    output.emit(args, record,
                [_hosts_table(record), _moves_table(record)] + notes)
    return errors.ACTION if record.get('moves') else errors.OK


def _rejections_table(move: dict):
    rows = [[r['subject'], r['rule'], r.get('detail', '')]
            for r in move.get('rejected', [])]
    return (f'Destinations rejected for {move["instance"]}',
            ['host', 'filter / rule', 'detail'], rows)


def _alternatives_table(move: dict):
    rows = []
    for alt in move.get('alternatives', []):
        if 'rejected' in alt:
            rows.append([output.short(alt['instance']), '-', '-', '-',
                         '; '.join(f'{h}: {r}' for h, r in
                                   alt['rejected'].items())])
        else:
            rows.append([output.short(alt['instance']), alt['destination'],
                         output.percent(alt.get('destination_cpu')),
                         alt.get('improvement'), 'scored'])
    return ('Instances considered', ['instance', 'best destination',
                                     'its cpu after', 'improvement',
                                     'outcome'], rows)


def _explain_host(args, record, verdict) -> int:
    moves = [m for m in record['moves'] if m['source'] == verdict['host']]
    notes = [n for n in record.get('notes', []) if verdict['host'] in n]
    tables = [('', ['host', 'state', 'why'],
               [[verdict['host'], _state(verdict), verdict.get('reason')]]),
              _moves_table({'moves': moves})]
    for move in moves:
        tables += [_alternatives_table(move), _rejections_table(move)]
    tables.append(('Notes', ['note'], [[n] for n in notes]))
    output.emit(args, {'host': verdict, 'moves': moves, 'notes': notes},
                tables)
    return errors.ACTION if verdict.get('violated') else errors.OK


def _explain_instance(args, record, uuid) -> int:
    host = record.get('instance_hosts', {}).get(uuid)
    verdict = next((v for v in record.get('hosts', [])
                    if v['host'] == host), None)
    blocked = record.get('blocked', {}).get(uuid)
    chosen = [m for m in record['moves'] if m['instance'] == uuid]
    considered = [m for m in record['moves']
                  if any(a['instance'] == uuid
                         for a in m.get('alternatives', []))]
    if host is None:
        raise errors.CLIError(f'no instance {uuid} on a compute host this '
                              'rebalancer sees', errors.USAGE)
    if chosen:
        why = f'would move: {chosen[0]["reason"]}'
    elif blocked:
        why = f'may not move now: {blocked}'
    elif verdict is None or not verdict.get('violated'):
        why = (f'not considered: its host {host} is not violated '
               f'({verdict.get("reason") if verdict else "not judged"})')
    elif considered:
        why = (f'considered on violated host {host}, but the planner '
               f'preferred {considered[0]["instance"]}')
    else:
        others = [m['instance'] for m in record['moves']
                  if m['source'] == host]
        why = (f'its host {host} is violated; '
               + (f'the planner moved {", ".join(others)} instead and did '
                  'not need to score this one' if others else
                  'no move was possible: ' + '; '.join(
                      n for n in record.get('notes', []) if host in n)))
    tables = [('', ['instance', 'host', 'why'], [[uuid, host, why]])]
    for move in chosen or considered:
        tables += [_alternatives_table(move), _rejections_table(move)]
    output.emit(args, {'instance': uuid, 'host': host, 'why': why,
                       'moves': chosen, 'considered_in': considered},
                tables)
    return errors.ACTION if chosen else errors.OK


def explain(args, conf) -> int:
    record = cloud.dry_run(conf)
    _skipped(record)
    for verdict in record.get('hosts', []):
        if verdict['host'] == args.subject:
            return _explain_host(args, record, verdict)
    if args.subject in record.get('instance_hosts', {}):
        return _explain_instance(args, record, args.subject)
    raise errors.CLIError(f'{args.subject!r} is neither a compute host nor '
                          'an instance on one', errors.USAGE)


def status(args, conf) -> int:
    record = cloud.dry_run(conf)
    _skipped(record)
    inflight = record.get('inflight', {})
    blocked = [[uuid, reason]
               for uuid, reason in sorted(record.get('blocked', {}).items())]
    attention = record.get('attention', {})
    output.emit(args, {'hosts': record.get('hosts', []),
                       'inflight': inflight,
                       'blocked': record.get('blocked', {}),
                       'attention': attention}, [
        _hosts_table(record),
        ('Migrations in flight', ['host', 'count'],
         sorted(inflight.get('by_host', {}).items())),
        ('Instances not movable now (cooldown, quarantine, opt-out, ...)',
         ['instance', 'reason'], blocked),
        ('Instances needing attention (left in ERROR by a DRS move)',
         ['instance', 'reason'], sorted(attention.items())),
    ])
    return errors.OK
