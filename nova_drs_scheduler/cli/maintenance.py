"""``nova-drs maintenance plan|enter|exit|status``: drain hosts through DRS.

``plan`` is a dry run of draining hosts (:mod:`.maintenance_plan`).
``enter`` disables each host's nova-compute service and stores the request
in the DRS database (:mod:`.rebalance.maintenance`); the leading scheduler
drains the host, period by period, and reports where it stands, which
``status`` and ``enter --wait`` read.  ``enter --one-at-a-time`` queues
the hosts behind the one draining; ``exit`` of the last host draining
starts the first queued one.  nova-drs itself migrates nothing.
"""

import time

from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import maintenance_plan
from nova_drs_scheduler.cli import output

#: Seconds between two reads of the drain's progress with ``--wait``.
POLL_SECONDS = 5.0
#: Periods without a leader's report after which ``status`` says so.
SILENT_PERIODS = 3


def add_parser(subparsers, parents):
    # nova.conf's options only after the action: argparse would reset
    # them to their defaults there otherwise.
    parser = subparsers.add_parser(
        'maintenance', parents=parents[:1],
        help='Plan draining hosts, drain them for maintenance, end their '
             'maintenance, or show where drains stand.',
        description='plan shows what draining hosts would do, moving and '
                    'storing nothing. enter disables a host\'s nova-compute '
                    'service (so nothing new lands on it) and asks the '
                    'leading scheduler to move every instance off it: '
                    'active and paused ones live, stopped ones cold, within '
                    'the rebalancer\'s rails; with --one-at-a-time the '
                    'hosts wait in a queue and drain one after the other. '
                    'exit ends the maintenance and re-enables the service '
                    'if nova-drs disabled it, then starts the first queued '
                    'host when no other host is draining. status shows '
                    'each host in maintenance: draining, drained, blocked '
                    'or queued, the instances left and the moves.')
    actions = parser.add_subparsers(dest='action', metavar='ACTION')
    actions.required = True
    plan = actions.add_parser(
        'plan', parents=parents,
        help='Dry run: what draining hosts would do.',
        description='Plans draining each HOST as the leading scheduler '
                    'would (the same planner, Nova\'s filters and '
                    'placement), every instance at once, and moves and '
                    'stores nothing: where each instance would go, what '
                    'would block and why, any host the instances would push '
                    'over its thresholds, the estimated time at the '
                    'configured pace, and the largest set of the hosts '
                    'found to drain at once. Exit 0 when every host can '
                    'drain at once, 6 when not.')
    plan.add_argument('hosts', metavar='HOST', nargs='+',
                      help='Compute hosts to drain.')
    enter = actions.add_parser(
        'enter', parents=parents, help='Put hosts in maintenance.',
        description='Disables each HOST\'s nova-compute service and asks '
                    'the leading scheduler to drain it, in the order given; '
                    'the first host refused stops the command. Run it again '
                    'to change the reason or to wait. With --one-at-a-time '
                    'only the first HOST starts now, and only when no host '
                    'is draining; the others wait in the queue, their '
                    'service enabled, and each starts when the host '
                    'before it exits maintenance. A queued HOST entered '
                    'without --one-at-a-time leaves the queue and drains '
                    'now.')
    enter.add_argument('hosts', metavar='HOST', nargs='+',
                       help='Compute hosts to drain.')
    enter.add_argument('--reason', help='Why, for the service\'s disabled '
                                        'reason and the status.')
    enter.add_argument('--one-at-a-time', action='store_true',
                       help='Drain the hosts one after the other: queue '
                            'every HOST behind the host draining (the '
                            'first HOST starts now if none is); exit of '
                            'the host draining starts the next.')
    enter.add_argument('--wait', action='store_true',
                       help='Show progress until every host is drained '
                            '(exit 0), until each is drained or blocked '
                            'with one blocked (exit 6), or until --timeout '
                            'passes (exit 7). With --one-at-a-time, only '
                            'the hosts draining now are waited for, not '
                            'the queued ones.')
    enter.add_argument('--timeout', type=errors.number(float, above=0),
                       default=3600.0,
                       help='Seconds --wait waits at most (default 3600).')
    leave = actions.add_parser(
        'exit', parents=parents, help='End a host\'s maintenance.',
        description='Ends HOST\'s maintenance: nothing more is moved off '
                    'it, and its nova-compute service is enabled again if '
                    'nova-drs disabled it (an operator\'s own disable is '
                    'left alone). When no other host is left draining, the '
                    'first host of the queue starts: its service is '
                    'disabled and the leading scheduler drains it; if Nova '
                    'refuses, the exit stands, that host stays queued and '
                    'the command exits 4. A queued HOST leaves the '
                    'queue.')
    leave.add_argument('host', metavar='HOST')
    status = actions.add_parser(
        'status', parents=parents, help='Where each drain stands.',
        description='Per host in maintenance: its state (draining, drained, '
                    'blocked, or queued with its place in the queue), the '
                    'instances left, moves in flight, completed and failed '
                    'since it entered, an estimate of the time left, and '
                    'each instance that blocks it with its reason.')
    status.add_argument('host', metavar='HOST', nargs='?',
                        help='Only this host.')
    for name, handler in (('plan', maintenance_plan.plan_),
                          ('enter', enter_), ('exit', exit_),
                          ('status', status_)):
        actions.choices[name].set_defaults(handler=handler)
    return parser


def _store_call(store, method, *args):
    from oslo_db import exception as db_exc

    from nova_drs_scheduler.db import store as db_store

    try:
        return getattr(store, method)(*args)
    except db_exc.DBError as exc:
        raise errors.CLIError(f'cannot use the DRS database: {exc}',
                              errors.CLOUD)
    except db_store.NotFoundError as exc:
        raise errors.CLIError(str(exc), errors.USAGE)


def _nova_call(action, store, *args):
    """An action on Nova's service record and the DRS database; an
    unknown host is a usage error, a refusal by Nova one line, and a
    database failure is classified as any (:func:`.errors.classify`)."""
    from nova import exception

    from nova_drs_scheduler.db import store as db_store
    from nova_drs_scheduler.rebalance import maintenance

    try:
        return getattr(maintenance, action)(store, *args)
    except (maintenance.UnknownHostError, db_store.NotFoundError) as exc:
        raise errors.CLIError(str(exc), errors.USAGE)
    except exception.NovaException as exc:
        raise errors.CLIError(f'Nova refused the service update: {exc}',
                              errors.CLOUD)


def enter_(args, conf) -> int:
    """Enter each host in turn; the first refusal stops, the hosts entered
    before it shown."""
    from nova_drs_scheduler.db import store as db_store

    # Positional, as the enter of a single host is called without it.
    queue = (True,) if getattr(args, 'one_at_a_time', False) else ()
    store = db.open_store(conf)
    try:
        rows = []
        try:
            for host in args.hosts:
                rows.append(_nova_call('enter', store, host, args.reason,
                                       *queue))
        except errors.CLIError:
            if rows:
                _entered(args, rows)
            raise
        started = [row['host'] for row in rows
                   if row['state'] != db_store.QUEUED]
        if args.wait and started:
            if len(started) < len(rows) and not args.json:
                print(f'Waiting for {", ".join(started)} only; the queued '
                      f'hosts start one after the other as each exits.',
                      flush=True)
            return wait(args, store, started, args.timeout, conf)
        _entered(args, rows)
        if not args.json:
            print(_next_step(args.hosts, started))
        return errors.OK
    finally:
        store.close()


def _next_step(hosts: list, started: list) -> str:
    """What happens next, after the table of the hosts entered."""
    if len(started) == len(hosts):
        return ('The leading scheduler drains '
                + (f'it from its next period: nova-drs maintenance status '
                   f'{hosts[0]}' if len(hosts) == 1 else
                   'them from its next period: nova-drs maintenance '
                   'status'))
    line = (f'The leading scheduler drains {", ".join(started)} from its '
            f'next period; ' if started else '')
    return (line + 'the queued hosts wait, in service, each until '
            '"nova-drs maintenance exit" of the host draining before it: '
            'nova-drs maintenance status')


def _entered(args, rows: list) -> None:
    """The hosts entered: the row of a single HOST in JSON, else a list."""
    output.emit(args, rows[0] if len(args.hosts) == 1 else rows, [
        ('', ['host', 'state', 'service'], [[
            row['host'], row['state'],
            f'disabled ({row["service_disabled_reason"]})'
            if row.get('queue_position') is None else
            f'enabled until its turn (queue position '
            f'{row["queue_position"]})']
            for row in rows])])


def exit_(args, conf) -> int:
    """End a host's maintenance; when the queue's first host was to start
    and Nova refused, the exit stands and the code is CLOUD."""
    store = db.open_store(conf)
    try:
        row = _nova_call('exit', store, args.host)
    finally:
        store.close()
    service = ('enabled again' if row['enabled'] else
               'left disabled (not disabled by nova-drs)'
               if row['service_disabled'] else 'enabled')
    hosts = [[row['host'], 'ended', service]]
    following = row.get('next')
    if following is not None and following['started']:
        hosts.append([following['host'], 'started (first in the queue)',
                      f'disabled ({following["service_disabled_reason"]})'])
    elif following is not None:
        hosts.append([following['host'], 'still queued (first)',
                      'enabled (Nova refused to disable it)'])
    output.emit(args, row, [('', ['host', 'maintenance', 'service'],
                             hosts)])
    if following is not None and not following['started']:
        raise errors.CLIError(
            f'{row["host"]} left maintenance, but the drain of '
            f'{following["host"]}, first in the queue, did not start: '
            f'{following["error"]}; it stays queued: run "nova-drs '
            f'maintenance enter {following["host"]}" to start it',
            errors.CLOUD)
    return errors.OK


def wait(args, store, hosts: list, timeout: float, conf,
         clock=time.monotonic, sleep=time.sleep) -> int:
    """Print a line each time a drain's progress changes, until every
    host is drained or blocked; 0 when all are drained, BLOCKED when one
    is blocked, TIMED_OUT when ``timeout`` passes first."""
    from nova_drs_scheduler.planning import drain

    deadline = clock() + timeout
    shown = {}
    while True:
        rows = []
        for host in hosts:
            found = _store_call(store, 'maintenance', host)
            if not found:
                raise errors.CLIError(f'host {host} left maintenance while '
                                      f'waiting', errors.USAGE)
            rows.append(summary(found[0], conf))
            line = _progress_line(rows[-1])
            if line != shown.get(host):
                print(line, flush=True)
                shown[host] = line
        if all(row['state'] == drain.DRAINED for row in rows):
            return errors.OK
        if all(row['state'] in (drain.DRAINED, drain.BLOCKED)
               for row in rows):
            blocked = [row for row in rows if row['state'] == drain.BLOCKED]
            for row in blocked:
                for blocker in row['blockers']:
                    print(f'  blocked by {_instance(blocker)} on '
                          f'{row["host"]}: {blocker["reason"]}', flush=True)
            raise errors.CLIError(
                f'the drain of {_names(blocked)} is blocked: '
                f'{sum(len(row["blockers"]) for row in blocked)} '
                f'instance(s) cannot leave (listed above); act on them, '
                f'then run this again', errors.BLOCKED)
        if clock() >= deadline:
            left = [row for row in rows if row['state'] != drain.DRAINED]
            counts = [row['instances'] for row in left]
            raise errors.CLIError(
                f'{_names(left)} not drained within {timeout:g} s '
                f'({"?" if None in counts else sum(counts)} instance(s) '
                f'left); the drain goes on', errors.TIMED_OUT)
        sleep(min(POLL_SECONDS, max(0.0, deadline - clock())))


def _names(rows: list) -> str:
    return ', '.join(row['host'] for row in rows)


def summary(row: dict, conf) -> dict:
    """A stored row as ``status`` shows it: counts, blockers, time left
    and whether the leader has gone silent."""
    from oslo_utils import timeutils

    from nova_drs_scheduler.planning import drain

    progress = row.get('progress') or {}
    now = timeutils.utcnow()
    left = progress.get('instances')
    reported = row.get('reported_at')
    position = row.get('queue_position')
    # A queued host waits for exit, not for a leader: none reports it.
    silent = position is None and (reported is None or (
        now - reported).total_seconds() > (
        SILENT_PERIODS * conf.drs.rebalance_interval))
    return {
        'host': row['host'], 'state': row['state'],
        'queue_position': position,
        'reason': row.get('reason'),
        'requested_at': row['requested_at'], 'reported_at': reported,
        'instances': left, 'moves': row['moves'],
        'time_left_seconds': drain.time_left(
            row['requested_at'], now, row['moves']['completed'], left),
        'waiting': progress.get('waiting', []),
        'blockers': progress.get('blockers', []),
        'service_reenabled_on_exit': row['disabled_by_drs'],
        'leader_silent': silent,
    }


def _instance(item: dict) -> str:
    return output.server(item['instance'], {item['instance']: item['name']})


def _progress_line(row: dict) -> str:
    moves = row['moves']
    left = '?' if row['instances'] is None else row['instances']
    line = (f'{row["host"]}: {row["state"]}, {left} instance(s) left, '
            f'{moves["in_flight"]} in flight, {moves["completed"]} '
            f'completed, {moves["failed"]} failed, time left '
            f'{output.duration(row["time_left_seconds"])}')
    if row['leader_silent']:
        line += ' (no report from a leading scheduler yet)'
    return line


def status_(args, conf) -> int:
    store = db.open_store(conf)
    try:
        found = _store_call(store, 'maintenance', args.host)
    finally:
        store.close()
    if args.host and not found:
        raise errors.CLIError(f'host {args.host} is not in maintenance',
                              errors.USAGE)
    # The hosts draining by name, then the queue in its order.
    rows = sorted((summary(row, conf) for row in found), key=lambda r: (
        r['queue_position'] is not None, r['queue_position'] or 0))
    hosts = [[r['host'], r['state'],
              '-' if r['queue_position'] is None else r['queue_position'],
              '?' if r['instances'] is None else r['instances'],
              r['moves']['in_flight'], r['moves']['completed'],
              r['moves']['failed'], output.duration(r['time_left_seconds']),
              str(r['requested_at'])[:19],
              '-' if r['queue_position'] is not None else
              'none yet' if r['reported_at'] is None else
              str(r['reported_at'])[:19] + (
                  ' (silent)' if r['leader_silent'] else ''),
              r['reason'] or ''] for r in rows]
    blockers = [[r['host'], _instance(b), b['reason']]
                for r in rows for b in r['blockers']]
    output.emit(args, rows, [
        ('Hosts in maintenance', ['host', 'state', 'queue', 'left',
                                  'in flight',
                                  'completed', 'failed', 'time left',
                                  'since', 'last report', 'reason'], hosts),
        ('Blocking instances', ['host', 'instance', 'why'], blockers)])
    return errors.OK
