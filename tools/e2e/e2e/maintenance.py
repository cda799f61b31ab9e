"""Maintenance mode against the deployment: ``nova-drs maintenance``.

``drain`` (a scenario step): ``enter --wait`` run as an operator runs it
drains a compute holding active servers and a stopped one, ``exit`` gives
the host back.  ``drain_failover`` (a fault): the leading scheduler gets
SIGKILL in the middle of a drain and the other one finishes it.

What is checked comes from outside, as everywhere in the run: the
command's exit code and output, ``/os-services``, ``/os-migrations``,
the servers, placement's allocations and traits.
"""

import collections
import datetime
import json
import subprocess
import threading
import time

from e2e import deploy
from e2e import fakes
from e2e import runbook
from e2e.scenario import DONE
from e2e.scenario import wait_for

#: The start of the disabled reason nova-drs sets on the service.
REASON = 'nova-drs: maintenance'
#: The trait Nova's compute puts on a disabled service's provider, which
#: placement then excludes from every allocation candidate.
DISABLED_TRAIT = 'COMPUTE_STATUS_DISABLED'
#: /os-migrations statuses of a migration that ended well (a cold one is
#: 'confirmed' once DRS confirmed it).
COMPLETED = {'completed', 'confirmed'}
#: Exit codes of ``enter --wait``.
WAIT_RC = {0: 'drained', 6: 'blocked', 7: 'timed out'}


class Command:
    """A ``nova-drs`` child process whose output lines are collected as
    they come (``enter --wait`` prints one per change of progress)."""

    def __init__(self, argv, env=None):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=env)
        self.lines = []
        self.errors = []
        self._readers = [
            threading.Thread(target=self._read, args=(stream, into),
                             daemon=True)
            for stream, into in ((self.proc.stdout, self.lines),
                                 (self.proc.stderr, self.errors))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream, into) -> None:
        for line in stream:
            into.append(line.rstrip('\n'))

    def wait(self, timeout: float) -> int | None:
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = None
        for reader in self._readers:
            reader.join(5)
        return rc


def _argv(sc, *args, scheduler=None) -> list:
    """``nova-drs maintenance ARGS`` with a scheduler's nova.conf (default:
    the leader's): [database], [api_database], [drs_database] and the
    transport the service update's RPC to the compute needs."""
    conf = sc.dep.scheduler_conf[scheduler or sc.leader]
    return [deploy.tool('nova-drs'), 'maintenance', *args,
            '--config-file', conf]


def run(sc, *args, scheduler=None) -> tuple:
    """(exit code, stdout, stderr) of ``nova-drs maintenance ARGS``."""
    result = subprocess.run(_argv(sc, *args, scheduler=scheduler),
                            capture_output=True, text=True, timeout=300)
    return result.returncode, result.stdout, result.stderr


def status(sc, scheduler=None) -> tuple:
    """(exit code, {host: row}) of ``maintenance status --json``."""
    rc, out, err = run(sc, 'status', '--json', scheduler=scheduler)
    try:
        rows = {row['host']: row for row in json.loads(out)}
    except (ValueError, TypeError, KeyError):
        sc.report.info(f'maintenance status: rc {rc}, stderr: {err[-500:]}')
        rows = None
    return rc, rows


def _rc(rc: int, err: str) -> str:
    return f'rc {rc}' + (f': {err.strip()[-300:]}' if err.strip() else '')


def compute_service(sc, host: str) -> dict:
    return next(s for s in sc.nova.services('nova-compute')
                if s['host'] == host)


def _on(servers, host: str) -> list:
    return [s for s in servers if s.get('OS-EXT-SRV-ATTR:host') == host]


def _busiest(sc, at_least: int | None = None) -> str:
    """The compute holding the most servers; with ``at_least``, the one
    holding the fewest of those with at least that many."""
    counts = collections.Counter(s.get('OS-EXT-SRV-ATTR:host')
                                 for s in sc.nova.servers())
    enough = [h for h in deploy.COMPUTES if counts[h] >= (at_least or 0)]
    if at_least is None or not enough:
        return max(deploy.COMPUTES, key=lambda h: (counts[h], h))
    return min(enough, key=lambda h: (counts[h], h))


def _utcnow() -> str:
    """Now as decision records write their ``time``."""
    return datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None).isoformat()


def _migrations(sc, since: int) -> list:
    """Every migration (live and cold) since the migration ``since``."""
    return [m for m in sc.nova.migrations() if m['id'] > since]


def _moved(sc, expected: dict, host: str, provider: str) -> tuple:
    """What is wrong with the servers that left ``host``: ``(servers,
    leftovers)``.  Each server must be elsewhere in its state of before
    (``expected``: {uuid: status}), with no task, allocated on its new
    host's provider only; ``host``'s provider must hold nothing (no
    instance, no migration consumer)."""
    servers = {s['id']: s for s in sc.nova.servers()}
    providers = sc.placement.providers()
    wrong = []
    for uuid, state in expected.items():
        server = servers.get(uuid)
        if server is None:
            wrong.append((uuid, 'gone'))
            continue
        where = server.get('OS-EXT-SRV-ATTR:host')
        allocated = sc.placement.allocation_hosts(uuid, providers)
        if (where == host or server['status'] != state
                or server.get('OS-EXT-STS:task_state')
                or allocated != [where]):
            wrong.append((server['name'], where, server['status'],
                          server.get('OS-EXT-STS:task_state'), allocated))
    return wrong, sc.placement.consumers(provider)


def _ended(sc, since: int) -> list:
    """The migrations since ``since``, once none is in flight any more (a
    live migration's server is on its destination a moment before the
    migration is 'completed')."""
    return wait_for(lambda: _migrations(sc, since), lambda found: all(
        m['status'] in DONE | COMPLETED for m in found), 60, 1)


def _per_instance(migrations) -> dict:
    found = collections.defaultdict(list)
    for m in migrations:
        found[m['instance_uuid']].append(m)
    return found


def _describe(migrations) -> str:
    return ', '.join(f'{m["migration_type"]} {m["source_compute"]}->'
                     f'{m["dest_compute"]} {m["status"]}'
                     for m in sorted(migrations, key=lambda m: m['id']))


def drain(sc, book) -> None:
    """``maintenance enter --wait`` drains a host, live and cold; a server
    booted meanwhile lands elsewhere; ``exit`` gives the host back.  The
    three commands are doc/operations.md's, typed through ``book``."""
    report = sc.report
    report.step('Maintenance: nova-drs maintenance enter --wait drains a '
                'compute (live and cold migrations), exit enables it again')
    # Every other host idle, so that each can take the drained servers.
    sc.model.cool_all()
    host = _busiest(sc)
    provider = sc.placement.provider_uuid(host)
    on_host = _on(sc.nova.servers(), host)
    stopped = on_host[0]
    sc.nova.action(stopped['id'], {'os-stop': None})
    found = wait_for(lambda: sc.nova.server(stopped['id']),
                     lambda s: s['status'] == 'SHUTOFF'
                     and not s.get('OS-EXT-STS:task_state'), 120, 1)
    report.check(f'{stopped["name"]} on {host} stopped (os-stop)',
                 found['status'] == 'SHUTOFF', found['status'])
    expected = {s['id']: 'SHUTOFF' if s['id'] == stopped['id']
                else 'ACTIVE' for s in on_host}
    report.info(f'{host}: {len(on_host)} servers, '
                f'{list(expected.values()).count("ACTIVE")} ACTIVE and 1 '
                'SHUTOFF')
    since = sc.last_migration_id()
    started = time.monotonic()
    values = book.values(host=host)
    command = Command(book.argv(runbook.ENTER, values), env=book.env())
    # The first progress line comes once the service is disabled and the
    # request stored: what `enter` without --wait returns after.
    wait_for(lambda: command.lines, lambda lines: lines
             or command.proc.poll() is not None, 120, 0.2)
    service = compute_service(sc, host)
    report.check(f'nova-compute on {host} disabled by nova-drs '
                 '(GET /os-services)', service['status'] == 'disabled'
                 and (service['disabled_reason'] or '').startswith(REASON),
                 f'{service["status"]}, reason {service["disabled_reason"]!r}')
    flavor = sc.nova.request('GET', '/flavors')['flavors'][0]
    newcomer = sc.nova.boot('vm-during-drain', flavor['id'],
                            fakes.IMAGE_ID, None)['id']
    sc.servers.append(newcomer)
    rc = command.wait(300)
    elapsed = time.monotonic() - started
    for line in command.lines:
        report.info(f'  | {line}')
    report.check('maintenance enter --wait: exit 0 once drained, with its '
                 'progress lines', rc == 0
                 and len(command.lines) >= 2
                 and ': drained' in command.lines[-1],
                 f'rc {rc} ({WAIT_RC.get(rc, "error")}) after '
                 f'{elapsed:.0f}s, {len(command.lines)} '
                 f'line(s)' + (f'; stderr: {command.errors[-3:]}'
                               if command.errors else ''))
    book.judge(runbook.ENTER, values, rc, '\n'.join(command.lines),
               '\n'.join(command.errors))
    # A cold migration the drain ended is confirmed by the leader: at the
    # moment `drained` is reported, or by the next period.
    at_once = _moved(sc, expected, host, provider)
    report.info('when --wait returned: ' + (
        'every server in place, allocations exact' if at_once == ([], [])
        else f'not yet: {at_once}'))
    wrong, leftovers = wait_for(
        lambda: _moved(sc, expected, host, provider),
        lambda found: found == ([], []), 2 * sc.dep.rebalance_interval, 1)
    report.check(f'every server of {host} on another host in its state of '
                 'before (ACTIVE or SHUTOFF), no task, allocated on its new '
                 'host only', not wrong, str(wrong) if wrong else
                 ', '.join(sorted(expected.values())))
    report.check(f'nothing left allocated on {host}\'s provider',
                 not leftovers, str(leftovers) if leftovers else
                 'GET /resource_providers/{uuid}/allocations')
    migrations = _per_instance(_ended(sc, since))
    kinds = {uuid: [(m['migration_type'], m['status'], m['source_compute'])
                    for m in migrations.get(uuid, [])]
             for uuid in expected}
    report.check('one migration per server, live for ACTIVE, cold for '
                 'SHUTOFF, completed', all(
                     kinds[uuid] == [('live-migration' if state == 'ACTIVE'
                                      else 'migration', 'completed'
                                      if state == 'ACTIVE' else 'confirmed',
                                      host)]
                     for uuid, state in expected.items()),
                 _describe(m for ms in migrations.values() for m in ms))
    booted = wait_for(lambda: sc.nova.server(newcomer),
                      lambda s: s['status'] in ('ACTIVE', 'ERROR'), 180)
    report.check(f'a server booted during the drain (no host asked) lands '
                 f'on another host than {host}', booted['status'] == 'ACTIVE'
                 and booted.get('OS-EXT-SRV-ATTR:host') not in (host, None),
                 f'{booted["status"]} on {booted.get("OS-EXT-SRV-ATTR:host")}')
    service = compute_service(sc, host)
    traits = sc.placement.traits(provider)
    report.check(f'{host} stays disabled; {DISABLED_TRAIT} on its provider',
                 service['status'] == 'disabled'
                 and DISABLED_TRAIT in traits,
                 f'{service["status"]}, {len(traits)} traits')
    rc, rows = status(sc)
    row = (rows or {}).get(host) or {}
    report.check('maintenance status --json: drained, 0 left, one completed '
                 'move per server, none failed',
                 rc == 0 and row.get('state') == 'drained'
                 and row.get('instances') == 0
                 and row.get('moves') == {'completed': len(expected),
                                          'failed': 0, 'in_flight': 0},
                 f'rc {rc}: {row.get("state")}, {row.get("instances")} left, '
                 f'moves {row.get("moves")}')
    book.run(runbook.STATUS_HOST, values)

    sc.nova.action(stopped['id'], {'os-start': None})
    rc, out, err = book.run(runbook.EXIT, values)
    report.info(f'maintenance exit {host}: rc {rc}: '
                f'{" ".join(out.split())[:200]}{err[-300:]}')
    service = compute_service(sc, host)
    report.check(f'maintenance exit: nova-compute on {host} enabled again',
                 rc == 0 and service['status'] == 'enabled'
                 and not service['disabled_reason'],
                 f'{service["status"]}, reason {service["disabled_reason"]!r}')
    traits = wait_for(lambda: sc.placement.traits(provider),
                      lambda found: DISABLED_TRAIT not in found, 30, 1)
    report.check(f'{DISABLED_TRAIT} gone from {host}\'s provider',
                 DISABLED_TRAIT not in traits)
    rc, rows = status(sc)
    report.check(f'maintenance status no longer lists {host}',
                 rc == 0 and rows is not None and host not in rows,
                 f'rc {rc}, hosts {sorted(rows or {})}')
    wait_for(lambda: sc.nova.server(stopped['id']),
             lambda s: s['status'] == 'ACTIVE'
             and not s.get('OS-EXT-STS:task_state'), 120, 1)
    sc.check_servers_consistent('after maintenance')


def drain_failover(sc) -> None:
    """SIGKILL the leading scheduler while it drains a host; the other
    one (same tooz lock, same DRS database) finishes the drain."""
    report = sc.report
    report.step('Fault 4: SIGKILL the leading nova-drs-scheduler in the '
                'middle of a drain; the other one finishes it')
    sc.model.cool_all()
    leader = sc.leader
    other = 'scheduler-a' if leader == 'scheduler-b' else 'scheduler-b'
    if f'nova-drs-scheduler-{other}' not in sc.dep.sup.procs:
        sc.dep.start_scheduler(other)
        report.info(f'{other} started again, next to {leader} (the lock '
                    'holder)')

    def services():
        return {s['host']: s['state']
                for s in sc.nova.services('nova-scheduler')}
    states = wait_for(services, lambda st: st.get(other) == 'up'
                      and st.get(leader) == 'up', 180)
    report.check('two nova-drs-scheduler services up',
                 states.get(other) == 'up' and states.get(leader) == 'up',
                 str(states))
    # Migrations that last, so that one is running when the leader dies.
    sc.dep.set_migration_seconds(5)
    # Four servers or more: one move done, one running at the kill, and
    # at least two more periods of drain for the successor.
    host = _busiest(sc, at_least=4)
    provider = sc.placement.provider_uuid(host)
    on_host = {s['id']: s['name'] for s in _on(sc.nova.servers(), host)}
    since = sc.last_migration_id()
    records = len(sc.history(leader))
    rc, out, err = run(sc, 'enter', host, '--reason', 'e2e failover')
    report.check(f'maintenance enter {host} ({len(on_host)} servers)',
                 rc == 0, _rc(rc, err))

    # The kill: a drain move completed, another running (its destination
    # chosen: a kill while it is 'accepted' loses the scheduler's answer to
    # the conductor, see fault 1), and servers still on the host.
    def moment(migrations):
        statuses = [m['status'] for m in migrations]
        return (any(s in COMPLETED for s in statuses)
                and 'running' in statuses and 'accepted' not in statuses)
    found = wait_for(lambda: _migrations(sc, since), moment, 180, 0.3)
    left = _on(sc.nova.servers(), host)
    if not report.check('a drain move completed, another running, servers '
                        'left on the host', moment(found) and bool(left),
                        f'{_describe(found)}; {len(left)} left'):
        sc.dep.set_migration_seconds(0)
        return
    sc.dep.kill_scheduler(leader)
    killed = time.monotonic()
    killed_at = _utcnow()
    sc.leader = other
    # The rest of the drain at full speed (the running one keeps its 5 s).
    sc.dep.set_migration_seconds(0)
    report.info(f'SIGKILL {leader} (the lock holder) with {len(left)} '
                f'server(s) left on {host}: {_describe(found)}')
    led_by_killed = len(sc.history(leader)) - records

    def state():
        row = sc.store.maintenance(host)
        return row[0] if row else {}
    row = wait_for(state, lambda row: row.get('state') == 'drained', 240, 2)
    report.info(f'{host} {row.get("state")} '
                f'{time.monotonic() - killed:.0f}s after the kill')
    report.check(f'{host} ends drained', row.get('state') == 'drained'
                 and not _on(sc.nova.servers(), host),
                 f'{row.get("state")}, moves {row.get("moves")}')
    records_of_other = {r['id']: r for r in sc.history(other)
                        if r['time'] >= killed_at}
    by_other = [mv['instance'] for r in records_of_other.values()
                for mv in r.get('moves', []) if mv['instance'] in on_host]
    report.check(f'{other} finished the drain: its moves, its last report',
                 bool(by_other) and (row.get('progress') or {}).get(
                     'record') in records_of_other,
                 f'{leader} led {led_by_killed} period(s) of it, {other} '
                 f'moved {len(by_other)} of the {len(on_host)} server(s)')
    flowed = [r for r in records_of_other.values()
              if r.get('trigger') == 'drain-flow' and r.get('moves')]
    report.check(f'{other}\'s drain flowed between periods: a move started '
                 f'as the one before ended (records with trigger drain-flow)',
                 bool(flowed), f'{len(flowed)} flow step(s) of '
                 f'{len(records_of_other)} record(s)')
    migrations = _ended(sc, since)
    per_instance = _per_instance(migrations)
    twice = {on_host.get(uuid, uuid): len(ms)
             for uuid, ms in per_instance.items() if len(ms) > 1}
    report.check('each server migrated once, every migration completed, '
                 'none in error',
                 not twice and set(per_instance) == set(on_host) and all(
                     m['status'] in COMPLETED for m in migrations),
                 f'twice: {twice}; ' + _describe(migrations))
    wrong, leftovers = _moved(sc, dict.fromkeys(on_host, 'ACTIVE'), host,
                              provider)
    report.check(f'the servers are ACTIVE elsewhere, allocations exact, '
                 f'nothing left on {host}\'s provider',
                 not wrong and not leftovers, str((wrong, leftovers))
                 if wrong or leftovers else '')
    rc, out, err = run(sc, 'exit', host)
    service = compute_service(sc, host)
    report.check(f'maintenance exit {host} (with {other}\'s nova.conf): '
                 'service enabled', rc == 0
                 and service['status'] == 'enabled', _rc(rc, err))
    sc.check_servers_consistent('after fault 4')
