"""``nova-drs plan``, ``explain`` and ``status``: the live view.

All three read one dry-run period (:func:`.cloud.dry_run`): what the
rebalancer would decide now, and why.
"""

from nova_drs_scheduler.cli import cloud
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import output
from nova_drs_scheduler.conf import rebalance as drs_opts


def add_parsers(subparsers, parents) -> dict:
    """``plan``, ``explain`` and ``status``; returns their parsers."""
    helps = {
        'plan': ('Dry run: what would move now, and why.',
                 'Runs one rebalance period as the scheduler would now, '
                 'without migrating or recording anything: every host\'s '
                 'verdict and the moves the planner would make. Exit 1 '
                 'when something would move, 0 when nothing would.'),
        'explain': ('Why a host is or is not violated; why a server '
                    'would or would not move.',
                    'For a host: its verdict, the moves off it, the '
                    'servers considered and every destination rejected '
                    'with the filter or rule that rejected it. For a '
                    'server (UUID or name): whether it would move and '
                    'why, or why not. Exit 1 when the host is violated '
                    'or the server would move.'),
        'status': ('Every host\'s state; migrations in flight, servers '
                   'not movable now.',
                   'Every host\'s pool, CPU and RAM, window samples, '
                   'stabilization counter, threshold and state; live '
                   'migrations in flight per host; servers not movable '
                   'now (cooldown, quarantine, opt-out) and why; '
                   'servers a DRS move left in ERROR; each host\'s power '
                   'state and why, each pool\'s power management '
                   'verdict, its hosts on against those needed now and '
                   'at the forecast, and the host-hours (and kWh) its '
                   'standby hosts saved.'),
    }
    handlers = {'plan': plan, 'explain': explain, 'status': status}
    parsers = {}
    for name, (text, description) in helps.items():
        parsers[name] = subparsers.add_parser(
            name, parents=parents, help=text, description=description)
        parsers[name].set_defaults(handler=handlers[name])
    parsers['explain'].add_argument(
        'subject', metavar='HOST|SERVER',
        help='A compute host name, or a server\'s UUID or name.')
    return parsers


def _state(verdict: dict) -> str:
    if verdict.get('violated'):
        return 'VIOLATED'
    if verdict.get('cpu_percent') is None:
        return 'not judged'
    return 'over' if verdict.get('counter') else 'ok'


def _hosts_table(record: dict):
    verdicts = sorted(record.get('hosts', []),
                      key=lambda v: output.natural(v['host']))
    rows = [[v['host'], v.get('pool') or '-', output.percent(
        v.get('cpu_percent')), output.percent(v.get('ram_percent')),
        ' '.join(f'{s:.0f}' for s in v.get('window') or ()) or '-',
        v.get('counter', 0), output.percent(v.get('cpu_threshold')),
        _state(v), v.get('reason', '')]
        for v in verdicts]
    return ('Hosts', ['host', 'pool', 'cpu %', 'ram %', 'window', 'counter',
                      'cpu thr', 'state', 'why'], rows)


def _level_table(level: dict):
    """``[drs] aggressiveness`` and the options it sets, each with the
    value in force and where it comes from."""
    rows = [[name, f'{found["value"]:g}',
             f'set in the configuration (level: {found["level_value"]:g})'
             if found['overridden'] else 'level']
            for name, found in level['options'].items()]
    return (f'Aggressiveness {level["aggressiveness"]} '
            f'({level["name"]}; 1 conservative ... 5 aggressive)',
            ['option', 'value', 'from'], rows)


def _hosts_needed(pool: dict, needed: int | None) -> str:
    """Hosts needed plus the reserve, as the wake rule keeps them on."""
    if needed is None:
        return '-'
    return str(needed + pool.get('reserve_hosts', 0))


def _power_tables(record: dict) -> list:
    """Each host's power state and why; each pool's verdict; each pool's
    hosts on against those it needs, and what its standbys saved."""
    found = record.get('power') or {}
    rows = found.get('hosts') or {}
    pools = found.get('pools') or []
    reasons = {}
    for pool in pools:
        for name in pool.get('on') or ():
            reasons[name] = pool.get('reason', '')
    names = {v['host'] for v in record.get('hosts', [])} | set(rows)
    hosts = [[name, rows[name]['state'], rows[name]['since'],
              rows[name].get('error') or rows[name]['reason'] or '']
             if name in rows else
             [name, 'on', '-', reasons.get(name, '')]
             for name in sorted(names, key=output.natural)]
    return [
        ('Power', ['host', 'power', 'since', 'why'], hosts),
        ('Power management by pool',
         ['pool', 'level', 'cpu %', 'forecast %', 'band %', 'on',
          'standby', 'waking', 'entering', 'low periods', 'why'],
         [[p.get('pool') or '-', p['level'],
           output.percent(p.get('utilization')),
           output.percent(p.get('forecast')),
           '-'.join(f'{b:g}' for b in p['band']), len(p['on']),
           len(p['standby']), len(p['waking']), len(p['entering']),
           p['counter'], p['reason']] for p in pools]),
        ('Hosts and energy by pool',
         ['pool', 'on', 'needed now\n(+ reserve)',
          'needed at forecast\n(+ reserve)', 'standby\nhost-hours',
          'saved kWh'],
         [[p.get('pool') or '-', len(p['on']),
           _hosts_needed(p, p.get('needed_now')),
           _hosts_needed(p, p.get('needed')),
           output.number(p.get('standby_host_hours')),
           output.number(p.get('saved_kwh'))] for p in pools]),
    ]


def _moves_table(record: dict, names: dict):
    """Each move with what its plan expected: both hosts' CPU after it,
    and the relief it buys and what it costs, in core-minutes (when the
    planner weighed them)."""
    rows = [[output.server(m['instance'], names), m['source'],
             m['destination'],
             output.percent(m['expected'].get('source_cpu')),
             output.percent(m['expected'].get('destination_cpu')),
             output.number(m['expected'].get('relief')),
             output.number(m['expected'].get('cost')),
             m.get('reason', '')] for m in record.get('moves', [])]
    return ('Moves', ['server', 'from', 'to', 'from cpu after',
                      'to cpu after', 'relief\n(core-min)',
                      'cost\n(core-min)', 'why'], rows)


#: Where a move's reason says why it went inside the margin, or past its
#: destination's threshold.
_INSIDE = '; inside the margin: '
_PAST = '; past the threshold: '


def _inside_tables(moves: list, names: dict) -> list:
    """The moves made inside the margin (a warm pool, or a starved host),
    with the margin their destination kept and why, and those past their
    destination's threshold (a host far past its CPUs); none when there
    are none."""
    rows = []
    for m in moves:
        expected, reason = m.get('expected', {}), m.get('reason', '')
        if not expected.get('inside_margin'):
            continue
        past = expected.get('past_threshold')
        rows.append([output.server(m['instance'], names), m['destination'],
                     'past threshold' if past
                     else output.number(expected.get('graded_margin')),
                     reason.partition(_PAST if past else _INSIDE)[2]])
    return [('Moves inside the margin',
             ['server', 'to', 'margin kept', 'why'], rows)] if rows else []


def _skipped(record: dict):
    if record.get('skipped'):
        raise errors.CLIError(f'no plan: {record["skipped"]}', errors.CLOUD)


def plan(args, conf) -> int:
    record = cloud.dry_run(conf)
    _skipped(record)
    notes = [('Notes', ['note'], [[n] for n in record.get('notes', [])])]
    output.emit(args, record,
                [_hosts_table(record),
                 _moves_table(record, _names(record))] + notes)
    return errors.ACTION if record.get('moves') else errors.OK


def _rejections_table(move: dict, names: dict):
    rows = [[r['subject'], r['rule'], r.get('detail', '')]
            for r in sorted(move.get('rejected', []),
                            key=lambda r: output.natural(r['subject']))]
    return ('Destinations rejected for '
            f'{output.server(move["instance"], names)}',
            ['host', 'filter / rule', 'detail'], rows)


def _alternatives_table(move: dict, names: dict):
    rows = []
    for alt in move.get('alternatives', []):
        if 'rejected' in alt:
            rows.append([output.server(alt['instance'], names), '-', '-',
                         '-',
                         '; '.join(f'{h}: {r}' for h, r in
                                   alt['rejected'].items())])
        else:
            rows.append([output.server(alt['instance'], names),
                         alt['destination'],
                         output.percent(alt.get('destination_cpu')),
                         alt.get('improvement'), 'scored'])
    return ('Servers considered', ['server', 'best destination',
                                     'its cpu after', 'improvement',
                                     'outcome'], rows)


def _names(record: dict) -> dict:
    return record.get('instance_names', {})


def _explain_host(args, record, verdict) -> int:
    names = _names(record)
    moves = [m for m in record['moves'] if m['source'] == verdict['host']]
    notes = [n for n in record.get('notes', []) if verdict['host'] in n]
    tables = [('', ['host', 'state', 'why'],
               [[verdict['host'], _state(verdict), verdict.get('reason')]]),
              _moves_table({'moves': moves}, names)]
    tables += _inside_tables(moves, names)
    for move in moves:
        tables += [_alternatives_table(move, names),
                   _rejections_table(move, names)]
    tables.append(('Notes', ['note'], [[n] for n in notes]))
    output.emit(args, {'host': verdict, 'moves': moves, 'notes': notes},
                tables)
    return errors.ACTION if verdict.get('violated') else errors.OK


def _explain_instance(args, record, uuid) -> int:
    names = _names(record)
    host = record.get('instance_hosts', {}).get(uuid)
    verdict = next((v for v in record.get('hosts', [])
                    if v['host'] == host), None)
    blocked = record.get('blocked', {}).get(uuid)
    chosen = [m for m in record['moves'] if m['instance'] == uuid]
    considered = [m for m in record['moves']
                  if any(a['instance'] == uuid
                         for a in m.get('alternatives', []))]
    if chosen:
        why = f'would move: {chosen[0]["reason"]}'
    elif blocked:
        why = f'may not move now: {blocked}'
    elif verdict is None or not verdict.get('violated'):
        why = (f'not considered: its host {host} is not violated '
               f'({verdict.get("reason") if verdict else "not judged"})')
    elif considered:
        why = (f'considered on violated host {host}, but the planner '
               f'preferred {_named(considered[0]["instance"], names)}')
    else:
        others = [_named(m['instance'], names)
                  for m in record['moves'] if m['source'] == host]
        why = (f'its host {host} is violated; '
               + (f'the planner moved {", ".join(others)} instead and did '
                  'not need to score this one' if others else
                  'no move was possible: ' + '; '.join(
                      n for n in record.get('notes', []) if host in n)))
    tables = [('', ['server', 'name', 'host', 'why'],
               [[uuid, names.get(uuid) or '-', host, why]])]
    if chosen:
        tables.append(_moves_table({'moves': chosen}, names))
        tables += _inside_tables(chosen, names)
    for move in chosen or considered:
        tables += [_alternatives_table(move, names),
                   _rejections_table(move, names)]
    output.emit(args, {'instance': uuid, 'name': names.get(uuid),
                       'host': host, 'why': why,
                       'moves': chosen, 'considered_in': considered},
                tables)
    return errors.ACTION if chosen else errors.OK


def _named(uuid: str, names: dict) -> str:
    """The full UUID, for scripts, and the name, for people."""
    return f'{uuid} ({names[uuid]})' if names.get(uuid) else uuid


def _server(record: dict, subject: str) -> str | None:
    """The UUID of the server ``subject`` names (a UUID or a unique name)."""
    hosts = record.get('instance_hosts', {})
    if subject in hosts:
        return subject
    named = sorted(uuid for uuid, name in _names(record).items()
                   if name == subject)
    if len(named) > 1:
        raise errors.CLIError(
            f'{len(named)} servers are named {subject!r}: '
            + ', '.join(f'{uuid} on {hosts.get(uuid)}' for uuid in named)
            + '; give the UUID', errors.USAGE)
    return named[0] if named else None


def explain(args, conf) -> int:
    record = cloud.dry_run(conf)
    _skipped(record)
    for verdict in record.get('hosts', []):
        if verdict['host'] == args.subject:
            return _explain_host(args, record, verdict)
    uuid = _server(record, args.subject)
    if uuid is None:
        raise errors.CLIError(
            f'{args.subject!r} is neither a compute host nor a server (UUID '
            'or name) on one', errors.USAGE)
    return _explain_instance(args, record, uuid)


def status(args, conf) -> int:
    record = cloud.dry_run(conf)
    _skipped(record)
    names = _names(record)
    inflight = record.get('inflight', {})
    blocked = [[output.server(uuid, names), reason] for uuid, reason in
               sorted(record.get('blocked', {}).items(),
                      key=lambda item: (names.get(item[0]) or '', item[0]))]
    attention = record.get('attention', {})
    level = drs_opts.level_settings(conf)
    output.emit(args, {'hosts': record.get('hosts', []),
                       'aggressiveness': level,
                       'inflight': inflight,
                       'blocked': record.get('blocked', {}),
                       'attention': attention,
                       'power': record.get('power', {}),
                       'names': names}, [
        _level_table(level),
        _hosts_table(record),
        ('Migrations in flight', ['host', 'count'],
         sorted(inflight.get('by_host', {}).items(),
                key=lambda item: output.natural(item[0]))),
        ('Servers not movable now (cooldown, quarantine, opt-out, ...)',
         ['server', 'reason'], blocked),
        ('Servers needing attention (left in ERROR by a DRS move)',
         ['server', 'reason'],
         [[output.server(uuid, names), reason]
          for uuid, reason in sorted(attention.items())]),
    ] + _power_tables(record))
    return errors.OK
