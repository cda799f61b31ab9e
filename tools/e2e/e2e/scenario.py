"""The scenario and the faults, each a list of checks on the deployment.

Every check reads the deployment from outside, as an operator would: the
compute API (servers, /os-migrations), placement (allocations), the
DRS database the schedulers share, and the ``nova-drs`` command.
"""

import json
import subprocess
import time

from e2e import client
from e2e import deploy
from e2e import fakes
from e2e import load

THRESHOLD = 70.0          # aggregate metadata drs_cpu_threshold
#: What a heated host's servers add up to: the host is at 80%, and moving
#: any one of its (2 to 7, equally busy) servers brings it under 70%
#: (``heat_host`` heats 8 or more a little less).
HOT_HOST_TOTAL = 75.0
DONE = {'completed', 'failed', 'error', 'cancelled', 'done'}
LAYOUT = {'compute1': 4, 'compute2': 3, 'compute3': 3}


def wait_for(fetch, done, timeout: float, interval: float = 2.0):
    return client.poll(fetch, done, timeout, interval)


class Scenario:

    def __init__(self, dep: deploy.Deployment, report):
        self.dep = dep
        self.report = report
        self.nova = client.Nova(dep.layout.api_url)
        self.placement = client.Placement(dep.layout.placement_url)
        self.model = load.LoadModel(self.nova, dep, report)
        self.servers = []
        self.leader = 'scheduler-a'
        self.store = dep.drs_store()

    # -- helpers ------------------------------------------------------------

    def history(self, host: str) -> list:
        """The decision records ``host`` stored as the leader."""
        return [r for r in self.store.recent()
                if r.get('scheduler') == host]

    def latest_hosts(self) -> dict:
        """Every host's window and verdict, as the leader last stored."""
        return {row['host']: row for row in self.store.host_states()}

    def live_migrations(self, since_id: int = 0) -> list:
        return [m for m in self.nova.migrations()
                if m['migration_type'] == 'live-migration'
                and m['id'] > since_id]

    def last_migration_id(self) -> int:
        return max([m['id'] for m in self.nova.migrations()] or [0])

    def drs_cli(self, *args, host=None) -> tuple:
        """``nova-drs --json ARGS`` with ``host``'s nova.conf (default:
        the leader's)."""
        conf = self.dep.scheduler_conf[host or self.leader]
        result = subprocess.run(
            [deploy.tool('nova-drs'), '--json', *args, '--config-file',
             conf], capture_output=True, text=True, timeout=300)
        try:
            output = json.loads(result.stdout)
        except ValueError:
            output = None
            self.report.info(f'nova-drs {args[0]}: rc {result.returncode}, '
                             f'stderr: {result.stderr[-500:]}')
        return result.returncode, output

    def settled(self) -> bool:
        """No server busy, no migration running, every host under its
        threshold in the model."""
        servers = self.nova.servers()
        busy = [s for s in servers if s.get('OS-EXT-STS:task_state')
                or s['status'] != 'ACTIVE']
        running = [m for m in self.live_migrations()
                   if m['status'] not in DONE]
        loads = self.model.loads(servers)
        return not busy and not running and \
            max(loads.values()) <= THRESHOLD

    def heat_host(self, host: str) -> float:
        """Make ``host``'s servers equally busy, the host at 80% (less with
        more than 7 servers, so that moving one still cures it)."""
        self.model.cool_all()
        on_host = [s['id'] for s in self.nova.servers()
                   if s.get('OS-EXT-SRV-ATTR:host') == host]
        per_vm = HOT_HOST_TOTAL / len(on_host)
        if len(on_host) > 1:
            # The host minus one server half a point under the threshold.
            per_vm = min(per_vm, (THRESHOLD - load.BASE - 0.5)
                         / (len(on_host) - 1))
        self.model.heat(on_host, per_vm)
        self.report.info(f'{host}: {len(on_host)} servers now at '
                         f'{per_vm:.1f}% each -> '
                         f'{load.BASE + per_vm * len(on_host):.1f}% of the '
                         'host')
        return per_vm

    def target_host(self) -> str:
        """The host with the most servers never migrated: those are out of
        the rebalancer's cooldown, so it has something to move."""
        moved = {m['instance_uuid'] for m in self.nova.migrations()}
        counts = {h: 0 for h in deploy.COMPUTES}
        for server in self.nova.servers():
            host = server.get('OS-EXT-SRV-ATTR:host')
            if host in counts and server['id'] not in moved:
                counts[host] += 1
        return max(counts, key=counts.get)

    def check_servers_consistent(self, label: str) -> None:
        """All servers ACTIVE, idle, and allocated in placement on the
        resource provider of the host Nova says they are on."""
        servers = self.nova.servers()
        ids = {s['id'] for s in servers}
        self.report.check(f'{label}: all {len(self.servers)} servers still '
                          'exist', ids == set(self.servers),
                          f'{len(ids)} found')
        bad = [(s['name'], s['status'], s.get('OS-EXT-STS:task_state'))
               for s in servers if s['status'] != 'ACTIVE'
               or s.get('OS-EXT-STS:task_state')]
        self.report.check(f'{label}: all servers ACTIVE with no task',
                          not bad, str(bad) if bad else '')
        providers = self.placement.providers()
        wrong = []
        for server in servers:
            hosts = self.placement.allocation_hosts(server['id'], providers)
            if hosts != [server['OS-EXT-SRV-ATTR:host']]:
                wrong.append((server['name'],
                              server['OS-EXT-SRV-ATTR:host'], hosts))
        self.report.check(f'{label}: placement allocations match each '
                          "server's host", not wrong,
                          str(wrong) if wrong else 'GET /allocations/{uuid}')

    # -- steps ----------------------------------------------------------------

    def prepare(self) -> None:
        self.report.step('Flavor, DRS aggregate, 10 servers on 3 hosts')
        flavor = self.nova.create_flavor('drs.small', 1, 512, 1)
        self.aggregate = self.nova.create_aggregate('drs-pool',
                                                    deploy.COMPUTES, {
            'drs_cpu_threshold': str(int(THRESHOLD))})
        self.report.info(f'aggregate drs-pool: {", ".join(deploy.COMPUTES)},'
                         f' drs_cpu_threshold={THRESHOLD:.0f}')
        for host, count in LAYOUT.items():
            for i in range(count):
                server = self.nova.boot(f'vm-{host}-{i}', flavor['id'],
                                        fakes.IMAGE_ID, host)
                self.servers.append(server['id'])
        servers = wait_for(self.nova.servers, lambda ss: all(
            s['status'] in ('ACTIVE', 'ERROR') for s in ss), 180)
        placed = {s['OS-EXT-SRV-ATTR:host'] for s in servers}
        by_host = {h: sum(1 for s in servers
                          if s['OS-EXT-SRV-ATTR:host'] == h) for h in LAYOUT}
        self.report.check('10 servers booted through nova-drs-scheduler',
                          len(servers) == 10 and all(
                              s['status'] == 'ACTIVE' for s in servers),
                          f'on {sorted(placed)}')
        self.report.check('servers on the requested hosts', by_host == LAYOUT,
                          str(by_host))
        self.check_servers_consistent('after boot')
        self.model.start()

    def metrics_flow(self) -> None:
        self.report.step('Host CPU flows compute monitor -> DB -> scheduler')
        expected = self.model.loads(self.nova.servers())

        def seen():
            return {h: v['cpu_percent'] for h, v in
                    self.latest_hosts().items()}

        def close(got):
            # Nova stores cpu.percent as a fraction and reads it back into
            # an integer field, so 29% can come back as 28 (0.29 * 100 =
            # 28.999...): allow one point.
            return set(got) == set(expected) and all(
                abs(got[h] - expected[h]) <= 1 for h in expected)
        got = wait_for(seen, close, 90)
        self.report.check('scheduler sees the loads written on the computes',
                          close(got), f'expected {expected}, saw {got}')

    def rebalance(self) -> None:
        self.report.step('Overload compute1; DRS live-migrates until cured')
        since = self.last_migration_id()
        self.heat_host('compute1')
        started = time.monotonic()
        wait_for(lambda: None, lambda _: self.settled() and
                 self.live_migrations(since), 300, 3)
        migrations = self.live_migrations(since)
        self.report.info(f'{len(migrations)} migration(s) in '
                         f'{time.monotonic() - started:.0f}s: ' + ', '.join(
                             f'{m["source_compute"]}->{m["dest_compute"]} '
                             f'{m["status"]}' for m in migrations))
        self.report.check('DRS live-migrated servers off compute1',
                          bool(migrations) and all(
                              m['source_compute'] == 'compute1'
                              for m in migrations))
        self.report.check('every migration completed (/os-migrations)',
                          bool(migrations) and all(
                              m['status'] == 'completed' for m in migrations))
        servers = {s['id']: s for s in self.nova.servers()}
        moved_ok = all(servers[m['instance_uuid']]['OS-EXT-SRV-ATTR:host']
                       == m['dest_compute'] for m in migrations)
        self.report.check("migrated servers are on the migration's "
                          'destination', moved_ok)
        loads = self.model.loads(servers.values())
        self.report.check('every host under its threshold now',
                          max(loads.values()) <= THRESHOLD,
                          ', '.join(f'{h} {v:.0f}%' for h, v in
                                    sorted(loads.items())))
        self.check_servers_consistent('after rebalance')
        moves = [mv for r in self.history(self.leader)
                 for mv in r.get('moves', [])]
        recorded = {mv['instance'] for mv in moves}
        self.report.check('the DRS database records each migration',
                          {m['instance_uuid'] for m in migrations}
                          <= recorded, f'{len(moves)} move(s) recorded')
        self.rebalanced = migrations

    def cli(self) -> None:
        self.report.step('nova-drs plan / status / history against the '
                         'deployment')
        # Let one more period see the cured host before asking.
        time.sleep(2 * self.dep.rebalance_interval)
        rc, plan = self.drs_cli('plan')
        self.report.check('nova-drs plan: exit 0, nothing to move',
                          rc == 0 and plan is not None
                          and plan.get('moves') == [], f'rc {rc}')
        rc, status = self.drs_cli('status')
        hosts = {h['host']: h for h in (status or {}).get('hosts', [])}
        expected = self.model.loads(self.nova.servers())
        self.report.check('nova-drs status: 3 hosts, none violated',
                          rc == 0 and set(hosts) == set(deploy.COMPUTES)
                          and not any(h['violated'] for h in hosts.values()),
                          ', '.join(f'{h} {v["cpu_percent"]}%'
                                    for h, v in sorted(hosts.items())))
        self.report.check('nova-drs status: CPU as written on the computes',
                          set(hosts) == set(expected) and all(
                              abs(hosts[h]['cpu_percent'] - expected[h]) <= 1
                              for h in expected), str(expected))
        rc, history = self.drs_cli('history', '--moves-only')
        moves = {mv['instance']: mv for r in (history or [])
                 for mv in r.get('moves', [])}
        done = {m['instance_uuid'] for m in self.rebalanced}
        outcomes = {moves[u]['outcome']['status'] for u in done
                    if u in moves}
        self.report.check('nova-drs history: each migration with its '
                          'outcome', rc == 0 and done <= set(moves)
                          and outcomes == {'completed'}, str(outcomes))
