"""The four faults, in priority order; each is a step of the run."""

import collections
import datetime
import time

from e2e import deploy
from e2e import fakes
from e2e import maintenance
from e2e.scenario import DONE
from e2e.scenario import wait_for


def _cured(sc, since: int, timeout: float = 300) -> list:
    """Wait until DRS has moved something since ``since`` and all is calm;
    returns the live migrations since then."""
    wait_for(lambda: None, lambda _: sc.settled() and
             sc.live_migrations(since), timeout, 3)
    migrations = sc.live_migrations(since)
    sc.report.info(f'{len(migrations)} migration(s): ' + ', '.join(
        f'{m["source_compute"]}->{m["dest_compute"]} {m["status"]}'
        for m in migrations))
    return migrations


def _repeated(migrations) -> list:
    counts = collections.Counter(m['instance_uuid'] for m in migrations)
    return [uuid for uuid, n in counts.items() if n > 1]


def scheduler_sigkill(sc) -> None:
    """SIGKILL the rebalancer while its migration runs, then restart it."""
    report = sc.report
    report.step('Fault 1: SIGKILL nova-drs-scheduler during a live '
                'migration, then restart it')
    sc.dep.set_migration_seconds(20)
    since = sc.last_migration_id()
    target = sc.target_host()
    sc.heat_host(target)
    # 'running': the destination is chosen and the computes migrate.  (A
    # kill while the migration is still 'accepted' leaves the conductor
    # waiting on select_destinations until rpc_response_timeout, then the
    # migration ends in 'error' with the server unchanged.)
    found = wait_for(lambda: sc.live_migrations(since), lambda ms: any(
        m['status'] == 'running' for m in ms), 180, 1)
    running = [m for m in found if m['status'] == 'running']
    if not report.check('a DRS live migration is running', bool(running)):
        return
    victim = running[0]
    sc.dep.kill_scheduler('scheduler-a')
    report.info(f'SIGKILL nova-drs-scheduler while migration '
                f'{victim["id"]} ({victim["source_compute"]}->'
                f'{victim["dest_compute"]}) is {victim["status"]}')
    final = wait_for(
        lambda: {m['id']: m for m in sc.live_migrations(since)}[victim['id']],
        lambda m: m['status'] in DONE, 120)
    report.check('the migration ends cleanly without the scheduler',
                 final['status'] in DONE, final['status'])
    sc.dep.set_migration_seconds(0)
    records_before = len(sc.history('scheduler-a'))
    sc.dep.start_scheduler('scheduler-a')
    report.info('nova-drs-scheduler restarted; watching 3 of its periods')
    # Polled, not slept: on a loaded machine the new process spends tens of
    # seconds importing Nova and taking the lock before its first period.
    records = wait_for(lambda: len(sc.history('scheduler-a')),
                       lambda n: n >= records_before + 3,
                       3 * sc.dep.rebalance_interval + 120)
    migrations = _cured(sc, since)
    report.check('the restarted scheduler runs periods again',
                 records > records_before,
                 f'{records - records_before} new record(s)')
    report.check(f'{target} cured, no instance migrated twice',
                 not _repeated(migrations) and sc.settled(),
                 f'{len(migrations)} migration(s) in this step')
    report.check('no migration left in an error state',
                 all(m['status'] == 'completed' for m in migrations),
                 str(sorted({m['status'] for m in migrations})))
    sc.check_servers_consistent('after fault 1')


def _counters(sc, host: str, target: str, since: str) -> list:
    """``target``'s counter in each period ``host`` led since ``since``
    (a stored record keeps the hosts over their threshold: absent is 0)."""
    return [next((h['counter'] for h in r['hosts'] if h['host'] == target),
                 0)
            for r in sc.history(host)
            if r['time'] >= since and not r.get('skipped')]


def two_schedulers(sc) -> None:
    """Two rebalancers, one Redis lock, one DRS database: one acts; kill
    it, the other continues its counters and its recommendations."""
    report = sc.report
    report.step('Fault 2: two nova-drs-scheduler processes, one tooz lock '
                '(Redis), one DRS database (MariaDB); kill the holder')
    sc.model.cool_all()
    sc.dep.start_scheduler('scheduler-b')

    def services():
        return {s['host']: s['state']
                for s in sc.nova.services('nova-scheduler')}
    # Watched from when scheduler-b is up (polled: on a loaded machine it
    # takes tens of seconds to start), for five of scheduler-a's periods.
    wait_for(services, lambda st: st.get('scheduler-b') == 'up', 180)
    before = {h: len(sc.history(h)) for h in ('scheduler-a', 'scheduler-b')}
    new = wait_for(
        lambda: {h: len(sc.history(h)) - n for h, n in before.items()},
        lambda n: n['scheduler-a'] >= 5 or n['scheduler-b'] > 0,
        5 * sc.dep.rebalance_interval + 120)
    report.check('only the lock holder (scheduler-a) runs periods',
                 new['scheduler-a'] > 0 and new['scheduler-b'] == 0,
                 f'new records: {new}')
    states = services()
    report.check('both register as nova-scheduler and are up',
                 states.get('scheduler-a') == 'up'
                 and states.get('scheduler-b') == 'up', str(states))

    # Moves of the pool left to an operator: the heated host stays over
    # and its counter grows every period, across the failover.
    sc.nova.set_aggregate_metadata(sc.aggregate['id'],
                                   {'drs_automation': 'manual'})
    since = sc.last_migration_id()
    target = sc.target_host()
    heated = datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None).isoformat()
    sc.heat_host(target)
    wait_for(lambda: _counters(sc, 'scheduler-a', target, heated),
             lambda counters: counters and counters[-1] >= 3, 120)
    sc.dep.kill_scheduler('scheduler-a')
    sc.leader = 'scheduler-b'
    report.info('SIGKILL scheduler-a (the lock holder)')
    led_by_a = _counters(sc, 'scheduler-a', target, heated)
    led_by_b = wait_for(lambda: _counters(sc, 'scheduler-b', target, heated),
                        bool, 120)
    report.check('scheduler-b continues the counters (no reset on '
                 'failover)', led_by_a and led_by_b and
                 led_by_b[0] == led_by_a[-1] + 1,
                 f'{target}: scheduler-a {led_by_a}, then scheduler-b '
                 f'{led_by_b}')
    rc, history = sc.drs_cli('history', '--limit', '1000',
                             host='scheduler-b')
    report.check("nova-drs history with scheduler-b's nova.conf shows "
                 "scheduler-a's records", rc == 0 and any(
                     r.get('scheduler') == 'scheduler-a'
                     for r in history or []), f'rc {rc}')
    rc, found = sc.drs_cli('recommendations', host='scheduler-b')
    pending = [r for r in found or []
               if r['state'] == 'pending' and r['source'] == target]
    report.check(f'the move off {target} waits as one pending '
                 'recommendation', rc == 0 and len(pending) == 1,
                 str([(r['id'], r['state'], r['source'])
                      for r in found or []]))
    rc, approved = sc.drs_cli('apply', '--all', host='scheduler-b')
    report.info(f'nova-drs apply --all: rc {rc}, {approved}')
    migrations = _cured(sc, since)
    moves = [mv for r in sc.history('scheduler-b')
             for mv in r.get('moves', [])]
    report.check('scheduler-b started the approved move and relieved the '
                 'host', bool(migrations) and {
                     m['instance_uuid'] for m in migrations}
                 <= {mv['instance'] for mv in moves},
                 f'{len(moves)} move(s) in scheduler-b\'s records')
    report.check('its migrations completed, none repeated',
                 all(m['status'] == 'completed' for m in migrations)
                 and not _repeated(migrations))
    # The leader records a move's outcome when it follows the migration
    # up, at a period after the migration ended: poll for it.
    key = pending[0]['id'] if pending else None

    def states_now():
        found = sc.drs_cli('recommendations', '--all',
                           host='scheduler-b')[1]
        return {r['id']: r['state'] for r in found or []}

    states = wait_for(states_now,
                      lambda got: got.get(key) == 'completed',
                      4 * sc.dep.rebalance_interval + 30, 5)
    report.check('the approved recommendation is completed',
                 pending and states.get(pending[0]['id']) == 'completed',
                 str(states))
    sc.nova.set_aggregate_metadata(sc.aggregate['id'],
                                   {'drs_automation': None})
    sc.check_servers_consistent('after fault 2')


def rabbit_restart(sc) -> None:
    """Restart the broker; services reconnect and DRS still migrates."""
    report = sc.report
    report.step('Fault 3: restart RabbitMQ while the services run')
    sc.model.cool_all()
    sc.dep.rabbit.stop()
    report.info('RabbitMQ stopped')
    time.sleep(sc.dep.rebalance_interval)
    sc.dep.rabbit.start()
    report.info('RabbitMQ started again')
    restarted = time.monotonic()
    records = len(sc.history(sc.leader))
    # Services report through RPC (computes via the conductor), so after
    # service_down_time (30 s) they show down unless they reconnected.  A
    # heartbeat sent while the broker was down waits rpc_response_timeout
    # (60 s) for its lost reply before the next one goes out: allow that.
    time.sleep(35)

    def states():
        return {(s['binary'], s['host']): s['state']
                for s in sc.nova.services('nova-compute')
                + sc.nova.services('nova-conductor')}
    final = wait_for(states, lambda st: all(v == 'up' for v in st.values()),
                     90)
    report.check('computes and conductor reconnected (services up)',
                 all(v == 'up' for v in final.values()),
                 ', '.join(f'{host} {state}' for (_binary, host), state
                           in sorted(final.items()))
                 + f'; {time.monotonic() - restarted:.0f}s after the restart')
    # A period blocked in an RPC call when the broker went away waits for
    # rpc_response_timeout (60 s) before it gives up: allow for it.
    wait_for(lambda: len(sc.history(sc.leader)), lambda n: n > records, 120)
    new = len(sc.history(sc.leader)) - records
    report.check('the rebalancer runs periods again', new > 0,
                 f'{new} new record(s) within '
                 f'{time.monotonic() - restarted:.0f}s of the restart')
    flavor = sc.nova.request('GET', '/flavors')['flavors'][0]
    server = sc.nova.boot('vm-after-rabbit', flavor['id'],
                          fakes.IMAGE_ID, deploy.COMPUTES[0])
    sc.servers.append(server['id'])
    booted = wait_for(lambda: sc.nova.server(server['id']),
                      lambda s: s['status'] in ('ACTIVE', 'ERROR'), 180)
    report.check('a server boots over the restarted broker',
                 booted['status'] == 'ACTIVE', booted['status'])
    since = sc.last_migration_id()
    sc.heat_host(sc.target_host())
    migrations = _cured(sc, since)
    report.check('DRS live-migrates over the restarted broker',
                 bool(migrations) and all(m['status'] == 'completed'
                                          for m in migrations))
    sc.check_servers_consistent('after fault 3')


ALL = (scheduler_sigkill, two_schedulers, rabbit_restart,
       maintenance.drain_failover)
