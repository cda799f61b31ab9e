"""Power management against a real (in-process) Nova: standby, wake,
reserve and minimum, unmovable instances, a refused power-off and the
manual level.

The power driver is the harness's own (:class:`HarnessPowerDriver`): a
powered-off host's ``nova-compute`` is stopped and forced down, so the
servicegroup sees it down as it would a host without power; a woken one
boots when the test says so (its compute service started again).  Loads
come from the ``static`` source, computed each period from where the
servers are (a host's CPU is its servers' cores), so demand moves with
the servers; the forecast's clock steps one period per period.
"""

import argparse
import datetime
import io
import json
import types

import fixtures
from nova import context as nova_context
from nova import objects
from nova.compute import api as compute_api
from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import inspect
from nova_drs_scheduler.cli import recommend
from nova_drs_scheduler.power import base as power_base
from nova_drs_scheduler.testing import records
from tests.functional.rebalance import base

CONF = conf.CONF

#: MediumFakeDriver's CPUs per host.
VCPUS = 10


class HarnessPowerDriver(power_base.PowerDriver):
    """Powers the harness's fake computes off and on, as a BMC would.

    ``power_off`` stops the host's compute service and forces it down;
    ``power_on`` only records the request: the host boots when the test
    calls :meth:`boot` (its compute service restarted, forced down
    unset), so a test sees the time a host spends *waking*.
    """

    def __init__(self, test):
        super().__init__(CONF)
        self.test = test
        self.calls = []
        #: Hosts whose power-off the BMC refuses.
        self.refuse = set()
        self.off = set()

    def power_off(self, host):
        self.calls.append(('power_off', host))
        if host in self.refuse:
            raise power_base.PowerError(host, 'the BMC refused the '
                                              'power-off')
        self.test.computes[host].stop()
        self._force_down(host, True)
        self.off.add(host)

    def power_on(self, host):
        self.calls.append(('power_on', host))

    def boot(self, host):
        """The woken host's nova-compute comes up."""
        self._force_down(host, False)
        self.test.computes[host] = self.test.restart_compute_service(
            self.test.computes[host])
        self.off.discard(host)

    def state(self, host):
        return power_base.OFF if host in self.off else power_base.ON

    @staticmethod
    def _force_down(host, down):
        api = compute_api.HostAPI()
        context = nova_context.get_admin_context()
        service = api.service_get_by_compute_host(context, host)
        service.forced_down = down
        api.service_update(context, service)


class PowerTestBase(base.RebalanceTestBase):

    HOSTS = ('host1', 'host2', 'host3', 'host4')
    DRS = {'power_management': 'automatic', 'power_low_periods': 2,
           'power_min_hosts': 2, 'power_reserve_hosts': 1,
           'power_boot_seconds': 600, 'rebalance_interval': 300,
           'level_gap': 0.0, 'max_migrations_per_period': 4,
           'max_concurrent_migrations': 4,
           'max_concurrent_migrations_per_host': 2}

    def setUp(self):
        super().setUp()
        self.driver = HarnessPowerDriver(self)
        self.rebalancer.power._driver = self.driver
        self.now = 1_800_000_000.0
        self.rebalancer.power.clock = lambda: self.now
        #: Cores each server uses: the demand.
        self.cores = {}

    # Building.

    def boot_servers(self, counts, cores=0.5, flavor=None):
        """``counts``: {host: servers}; each uses ``cores``."""
        found = []
        for host, count in counts.items():
            for _ in range(count):
                uuid = self._boot(host, flavor)
                self.cores[uuid] = cores
                found.append(uuid)
        return found

    # Periods.

    def loads(self):
        """Each host's CPU: its servers' cores, in percent."""
        hosts = {host: 0.0 for host in self.HOSTS}
        for instance in objects.InstanceList.get_by_filters(
                self.admin_context(), {'deleted': False}):
            if instance.uuid in self.cores and instance.host in hosts:
                hosts[instance.host] += (100.0 * self.cores[instance.uuid]
                                         / VCPUS)
        return hosts

    def period(self):
        """One period, one period length after the last."""
        self.now += CONF.drs.rebalance_interval
        return self.run_period(self.loads(), dict(self.cores))

    def until(self, host, state, periods=6):
        """Periods until ``host``'s power state is ``state``; the
        records."""
        found = []
        for _ in range(periods):
            found.append(self.period())
            if self.power_state(host) == state:
                return found
        self.fail(f'{host} not {state} after {periods} periods: '
                  f'{self.rows()}; last verdicts: '
                  f'{[p["reason"] for p in found[-1]["power"]["pools"]]}')

    def morning(self, servers, demand):
        """0.5 cores more every period, spread over ``servers``, from
        ``demand`` cores until a period wakes a host (2.5 points of two
        10-vCPU hosts: a morning ramp); that period's record."""
        seen = []
        while demand < 16.0:
            demand += 0.5
            for uuid in servers:
                self.cores[uuid] = demand / len(servers)
            record = self.period()
            seen.append(self.pool(record)['utilization'])
            if self.actions(record, 'wake'):
                return record
        self.fail(f'no wake; utilization {seen}')

    # Observing.

    def rows(self):
        return self.rebalancer.store.power_hosts()

    def power_state(self, host):
        return self.rows().get(host, {}).get('state', 'on')

    def service(self, host):
        [found] = self.admin_api.api_get(
            f'/os-services?host={host}&binary=nova-compute').body['services']
        return found

    def cli(self, handler, **options):
        """A ``nova-drs`` handler's JSON answer."""
        stdout = self.useFixture(fixtures.MonkeyPatch(
            'sys.stdout', io.StringIO())).new_value
        code = handler(argparse.Namespace(json=True, **options), conf.CONF)
        self.assertEqual(errors.OK, code)
        return json.loads(stdout.getvalue())

    def assertNothingLost(self):
        """Every server ACTIVE, its allocations exactly on its host, and
        no migration holding any."""
        for uuid in self.cores:
            server = self._server(uuid)
            self.assertEqual('ACTIVE', server['status'], uuid)
            host = server['OS-EXT-SRV-ATTR:host']
            self.assertEqual([host], self._allocated_hosts(uuid), uuid)
            for migration in self.migrations(uuid):
                self.assertEqual(
                    {}, self._get_allocations_by_server_uuid(
                        migration.uuid))

    @staticmethod
    def pool(record):
        [found] = record['power']['pools']
        return found

    @staticmethod
    def actions(record, kind=None):
        return [(a['kind'], a['host']) for a in record['power']['actions']
                if kind is None or a['kind'] == kind]


class QuietPoolTest(PowerTestBase):
    """A quiet pool: its cheapest host goes to standby, the rest serve."""

    # Reserve 2: one host goes (needed 1 + 2 = 3 of 4 stay on).
    DRS = dict(PowerTestBase.DRS, power_reserve_hosts=2)

    def test_cheapest_host_is_drained_and_powered_off(self):
        self.boot_servers({'host1': 2, 'host2': 2, 'host3': 1, 'host4': 2})
        [moved] = [uuid for uuid in self.cores
                   if self._host_of(uuid) == 'host3']
        first = self.period()
        self.assertEqual((1, []), (self.pool(first)['counter'],
                                   self.actions(first)))
        self.assertLess(self.pool(first)['utilization'], 45.0)

        records = self.until('host3', 'standby')
        self.assertEqual([('standby', 'host3')], self.actions(records[0]))
        [action] = records[0]['power']['actions']
        self.assertIn('cheapest to empty (0.5 GB to move)',
                      action['reason'])
        self.assertEqual([('power_off', 'host3')], self.driver.calls)
        service = self.service('host3')
        self.assertEqual('disabled', service['status'])
        self.assertTrue(service['disabled_reason'].startswith(
            'nova-drs: standby'), service['disabled_reason'])
        self.assertEqual('down', service['state'])
        # Its server went live to a host that stays on.
        self.assertIn(self._host_of(moved), ('host1', 'host2', 'host4'))
        self.assertEqual('drain', [
            m for r in records for m in r['moves']][0]['goal'])
        self.assertNothingLost()

        # One more period: nothing else goes (the reserve), nothing moves.
        again = self.period()
        self.assertEqual(([], []), (self.actions(again), again['moves']))
        self.assertEqual(['host3'], self.pool(again)['standby'])

        status = self.cli(inspect.status)
        shown = status['power']['hosts']['host3']
        self.assertEqual('standby', shown['state'])
        self.assertIn('host host3 is the cheapest to empty', shown['reason'])
        self.assertEqual(['host3'], status['power']['pools'][0]['standby'])


class EnergySavedTest(PowerTestBase):
    """``nova-drs status`` per pool: the hosts on against those needed,
    and the host-hours a host spent in standby, in kWh with a watts
    model."""

    DRS = dict(PowerTestBase.DRS, power_reserve_hosts=2,
               power_idle_watts=200.0, power_standby_watts=20.0)

    def later(self, hours):
        """The DRS database's clock ``hours`` on (Nova's is left alone:
        its services would read as down)."""
        real = timeutils.utcnow
        self.useFixture(fixtures.MonkeyPatch(
            'nova_drs_scheduler.db.power_rows.timeutils',
            types.SimpleNamespace(utcnow=lambda: real() + datetime.timedelta(
                hours=hours))))

    def test_status_shows_hosts_needed_and_standby_host_hours(self):
        self.boot_servers({'host1': 2, 'host2': 2, 'host3': 1, 'host4': 2})
        self.until('host3', 'standby', periods=8)
        self.later(2)

        status = self.cli(inspect.status)
        [pool] = status['power']['pools']
        # 3.5 cores need one 10-vCPU host; the reserve of 2 keeps 3 on.
        self.assertEqual((['host1', 'host2', 'host4'], 1, 1, 2),
                         (sorted(pool['on']), pool['needed_now'],
                          pool['needed'], pool['reserve_hosts']))
        # Two hours (and the seconds the test took) in standby, at 180 W.
        self.assertGreaterEqual(pool['standby_host_hours'], 2.0)
        self.assertLess(pool['standby_host_hours'], 2.1)
        self.assertAlmostEqual(pool['standby_host_hours'] * 0.18,
                               pool['saved_kwh'], places=2)

        stdout = self.useFixture(fixtures.MonkeyPatch(
            'sys.stdout', io.StringIO())).new_value
        inspect.status(argparse.Namespace(json=False), conf.CONF)
        lines = stdout.getvalue().splitlines()
        start = lines.index('Hosts and energy by pool')
        # tabulate prints 2.0 as 2.
        self.assertEqual(['-', '3', '3', '3', '2', '0.4'],
                         lines[start + 4].split(), '\n'.join(
                             lines[start:start + 5]))


class SeveralInOneStepTest(PowerTestBase):
    """A quiet pool with two hosts to spare sheds both in one period, each
    checked with the other's servers counted as placed."""

    def test_several_hosts_shed_in_one_step(self):
        # 3 cores in all: one host holds them under the band's middle, the
        # reserve keeps a second; host3 and host4 are the cheapest.
        self.boot_servers({'host1': 2, 'host2': 2, 'host3': 1, 'host4': 1})
        moving = [uuid for uuid in self.cores
                  if self._host_of(uuid) in ('host3', 'host4')]
        self.period()
        record = self.period()
        self.assertEqual([('standby', 'host3'), ('standby', 'host4')],
                         self.actions(record))
        first, second = record['power']['actions']
        self.assertIn('with host3 emptied too', second['reason'])
        self.assertEqual(
            {'host3': 'entering', 'host4': 'entering'},
            {host: row['state'] for host, row in self.rows().items()})
        for host in ('host3', 'host4'):
            self.assertEqual('disabled', self.service(host)['status'])

        self.until('host4', 'standby')
        self.until('host3', 'standby')
        self.assertEqual({('power_off', 'host3'), ('power_off', 'host4')},
                         set(self.driver.calls))
        for uuid in moving:
            self.assertIn(self._host_of(uuid), ('host1', 'host2'))
        self.assertNothingLost()
        # Two hosts left: nothing else goes.
        again = self.period()
        self.assertEqual([], self.actions(again))
        self.assertEqual(['host1', 'host2'], sorted(self.pool(again)['on']))


class WakeTest(PowerTestBase):
    """Demand rising: the forecast wakes a host before its hosts reach
    their threshold less the margin (75 %)."""

    HOSTS = ('host1', 'host2', 'host3')
    # No reserve: only the forecast (or the current value) can wake.
    DRS = dict(PowerTestBase.DRS, power_reserve_hosts=0)

    def test_a_host_wakes_before_the_pool_crosses_its_hosts_ceiling(self):
        large = self._flavor('large', vcpu=4)
        servers = self.boot_servers({'host1': 2, 'host2': 2}, cores=2.0,
                                    flavor=large)
        self.until('host3', 'standby')
        self.assertEqual([('power_off', 'host3')], self.driver.calls)

        # The morning, up to what the servers' CPUs allow.
        woke = self.morning(servers, 8.0)
        pool = self.pool(woke)
        self.assertEqual([('wake', 'host3')], self.actions(woke))
        # Woken on the forecast, while the pool was still under its hosts'
        # threshold less the margin.
        self.assertLess(pool['utilization'], 75.0)
        self.assertGreater(pool['forecast'], 75.0)
        # Every host, not only the pool's mean, under its threshold.
        loads = {v['host']: (v['cpu_percent'], v['cpu_threshold'])
                 for v in woke['hosts'] if v['host'] in pool['on']}
        self.assertEqual({'host1', 'host2'}, set(loads))
        for host, (cpu, threshold) in loads.items():
            self.assertLess(cpu, threshold, host)
        self.assertIn('demand forecast', woke['power']['actions'][0]['reason'])
        self.assertEqual([('power_off', 'host3'), ('power_on', 'host3')],
                         self.driver.calls)

        # Booting: waking, still disabled, woken once.
        record = self.period()
        self.assertEqual('waking', self.power_state('host3'))
        self.assertEqual('disabled', self.service('host3')['status'])
        self.assertEqual([], self.actions(record))
        self.assertEqual(['host3'], self.pool(record)['waking'])

        # Its nova-compute reports up: enabled, the row forgotten.
        self.driver.boot('host3')
        record = self.period()
        self.assertEqual({}, self.rows())
        service = self.service('host3')
        self.assertEqual(('enabled', 'up'), (service['status'],
                                             service['state']))
        self.assertEqual(['host1', 'host2', 'host3'],
                         sorted(self.pool(record)['on']))
        self.assertEqual(1, self.driver.calls.count(('power_on', 'host3')))
        self.assertNothingLost()


class LevelAfterWakeTest(PowerTestBase):
    """Every host on again after a wake: the woken host came back empty,
    and the pool levels onto it for ``level_after_wake`` (doc/power.md),
    before its hosts go over."""

    HOSTS = ('host1', 'host2', 'host3')
    DRS = dict(PowerTestBase.DRS, power_reserve_hosts=0, level_gap=10.0,
               benefit_horizon=0)

    def test_the_pool_levels_onto_the_woken_host(self):
        large = self._flavor('large', vcpu=4)
        servers = self.boot_servers({'host1': 2, 'host2': 2}, cores=2.0,
                                    flavor=large)
        self.until('host3', 'standby')
        woke = self.morning(servers, 8.0)
        # Without the window: once host3 is up, every host is on and none
        # over while the morning goes on, so nothing levels.
        self.flags(level_after_wake=0, group='drs')
        self.period()
        self.driver.boot('host3')
        demand = sum(self.cores.values())
        while demand < 14.5:
            demand += 0.5
            for uuid in servers:
                self.cores[uuid] = demand / len(servers)
            record = self.period()
            self.assertEqual(([], {}), (record['moves'], self.rows()))
        loads = self.loads()
        self.assertEqual(0.0, loads['host3'])
        self.assertGreaterEqual(min(loads['host1'], loads['host2']), 70.0,
                                self.pool(woke))
        # With it (6 h by default): the hottest host within 10 points of
        # its threshold sends a server to the woken one.
        self.flags(level_after_wake=21600, group='drs')
        record = self.period()
        [move] = record['moves']
        self.assertEqual('host3', move['destination'])
        self.assertIn('level: power management woke host host3 ',
                      move['reason'])
        self.assertEqual('completed', records.outcome(move)['status'])
        self.assertEqual(1, len([uuid for uuid in servers
                                 if self._host_of(uuid) == 'host3']))
        self.assertNothingLost()


class OverAfterPlacementTest(PowerTestBase):
    """A standby is refused when placing its host's servers would take a
    host over its threshold less the margin, however low the pool."""

    DRS = dict(PowerTestBase.DRS, power_reserve_hosts=0)

    def test_no_standby_that_takes_a_host_over_its_threshold(self):
        large = self._flavor('large', vcpu=4)
        # host1 and host2 at 70 %, their servers opted out; host3 and
        # host4 at 10 %, one member each of an anti-affinity group: each
        # member can only go to host1 or host2.
        pinned = self.boot_servers({'host1': 2, 'host2': 2}, cores=3.5,
                                   flavor=large)
        for uuid in pinned:
            self.admin_api.post_server_metadata(uuid, {'drs_exclude': 'true'})
        group = self.admin_api.post_server_groups(
            {'name': 'spread', 'policy': 'anti-affinity'})
        members = [self._boot_in_group(host, group['id'])
                   for host in ('host3', 'host4')]
        self.cores.update({uuid: 1.0 for uuid in members})

        records = [self.period() for _ in range(4)]
        self.assertEqual([], [a for r in records for a in self.actions(r)])
        pool = self.pool(records[-1])
        # 16 cores on 40: the pool's mean is far under the band, and the
        # band's top (81) would take host1 or host2 to 80 %.
        self.assertLess(pool['utilization'], 45.0)
        self.assertGreaterEqual(pool['counter'], 2)
        for host, member in zip(('host3', 'host4'), members, strict=True):
            self.assertIn(
                f'{host}: instance {member} has no allowed destination in '
                f'the pool left under its threshold less the margin at the '
                f'forecast', pool['reason'])
        self.assertEqual([], self.driver.calls)

        # A threshold of 86: 80 % is under it by the margin; host3's
        # member goes to host1, the first of the two by name.
        self.flags(group='drs', cpu_threshold=86.0)
        records = self.until('host3', 'standby')
        self.assertEqual([('standby', 'host3')], self.actions(records[0]))
        self.assertEqual('host1', self._host_of(members[0]))
        self.assertEqual([('power_off', 'host3')], self.driver.calls)
        self.assertNothingLost()


class NoValidHostTest(PowerTestBase):
    """A boot that finds no valid host wakes a standby host."""

    HOSTS = ('host1', 'host2', 'host3')
    DRS = dict(PowerTestBase.DRS, power_reserve_hosts=0)

    def _memory_flavor(self, name, memory_mb):
        return self._create_flavor(name=name, vcpu=1, memory_mb=memory_mb,
                                   disk=1, ephemeral=0)

    def test_no_valid_host_wakes_a_standby_host(self):
        memory = self._get_provider_inventory(
            self._get_provider_uuid_by_host('host1'))['MEMORY_MB']
        capacity = int((memory['total'] - memory['reserved'])
                       * memory['allocation_ratio'])
        # Fits an empty host only: host1 and host2 keep less free.
        big_mb = min(capacity, memory['max_unit'])
        filler = self._memory_flavor('filler', capacity - big_mb + 512)
        self.boot_servers({'host1': 1, 'host2': 1},
                          flavor=self.admin_api.get_flavor(filler))
        self.until('host3', 'standby')
        big = self._memory_flavor('big', big_mb)

        failed = self._create_server(flavor_id=big, networks='none',
                                     expected_state='ERROR')
        self.assertIn('No valid host', failed['fault']['message'])
        record = self.period()
        self.assertEqual([('wake', 'host3')], self.actions(record))
        self.assertIn('a boot found no valid host',
                      record['power']['actions'][0]['reason'])
        self.assertEqual(('power_on', 'host3'), self.driver.calls[-1])
        # The request was taken: no second wake for it.
        self.assertEqual([], self.actions(self.period()))

        self.driver.boot('host3')
        self.period()
        self.assertEqual(({}, 'enabled'), (self.rows(),
                                           self.service('host3')['status']))
        # The same boot again: the woken host takes it.
        server = self._create_server(flavor_id=big, networks='none')
        self.assertEqual('host3', server['OS-EXT-SRV-ATTR:host'])
        self.cores[server['id']] = 0.5
        self.assertNothingLost()


class ReserveAndMinimumTest(PowerTestBase):
    """Many quiet periods: never fewer hosts on than max(minimum, needed +
    reserve), and down to exactly that."""

    DRS = dict(PowerTestBase.DRS, power_min_hosts=3, power_reserve_hosts=0)

    def quiet(self, periods):
        """``periods`` periods; per period the pool's verdict."""
        found = []
        for _ in range(periods):
            pool = self.pool(self.period())
            found.append(pool)
            bound = max(CONF.drs.power_min_hosts,
                        pool['needed'] + CONF.drs.power_reserve_hosts)
            self.assertGreaterEqual(len(pool['on']), bound, pool)
            self.assertEqual(1, pool['needed'], pool)
        return found

    def test_reserve_and_minimum_are_honoured(self):
        # 3 cores in all: one host holds them under the band's top.
        self.boot_servers({'host1': 2, 'host2': 2, 'host3': 1, 'host4': 1})
        # The minimum binds: 3 hosts stay on.
        pools = self.quiet(7)
        self.assertEqual(3, len(pools[-1]['on']))
        self.assertEqual(1, len(pools[-1]['standby']))
        self.assertIn('minimum 3', pools[-1]['reason'])

        # The reserve binds: needed 1 + reserve 1 = 2 stay on.
        self.flags(group='drs', power_min_hosts=1, power_reserve_hosts=1)
        pools = self.quiet(6)
        self.assertEqual(2, len(pools[-1]['on']))
        self.assertEqual(2, len(pools[-1]['standby']))
        self.assertIn('reserve 1', pools[-1]['reason'])
        self.assertEqual(2, len(self.driver.off))
        self.assertEqual(
            sorted(('power_off', host) for host in self.driver.off),
            sorted(self.driver.calls))
        self.assertNothingLost()


class UnmovableTest(PowerTestBase):
    """A host holding a server that cannot move is never chosen."""

    DRS = dict(PowerTestBase.DRS, power_reserve_hosts=2)

    def test_host_with_an_opted_out_server_is_never_chosen(self):
        # host1 is the cheapest to empty, but its server opted out.
        [pinned] = self.boot_servers({'host1': 1})
        self.admin_api.post_server_metadata(pinned, {'drs_exclude': 'true'})
        self.boot_servers({'host2': 2, 'host3': 3, 'host4': 2})
        records = self.until('host2', 'standby')
        records += [self.period() for _ in range(3)]
        chosen = [action for record in records
                  for action in self.actions(record)]
        self.assertEqual([('standby', 'host2')], chosen)
        self.assertEqual([('power_off', 'host2')], self.driver.calls)
        self.assertEqual(('host1', 'enabled'), (
            self._host_of(pinned), self.service('host1')['status']))
        self.assertNotIn('host1', self.rows())
        self.assertNothingLost()


class RefusedPowerOffTest(PowerTestBase):
    """A power-off the driver refuses gives the host back."""

    DRS = dict(PowerTestBase.DRS, power_reserve_hosts=2)

    def test_refused_power_off_gives_the_host_back(self):
        self.boot_servers({'host1': 2, 'host2': 2, 'host3': 1, 'host4': 2})
        self.driver.refuse.add('host3')
        records = [self.period(), self.period()]
        self.assertEqual([('standby', 'host3')], self.actions(records[-1]))
        for _ in range(3):
            records.append(self.period())
            if self.driver.calls:
                break
        self.assertEqual([('power_off', 'host3')], self.driver.calls)
        self.assertEqual({}, self.rows())
        # Not chosen again in the period that gave it back: the pool
        # counts its quiet periods anew.
        self.assertEqual(([], 0), (self.actions(records[-1]),
                                   self.pool(records[-1])['counter']))
        service = self.service('host3')
        self.assertEqual(('enabled', 'up', None), (
            service['status'], service['state'],
            service['disabled_reason']))
        self.assertIn('power-off of host3 failed: ',
                      self.stdlog.logger.output)
        self.assertIn('the BMC refused the power-off',
                      self.stdlog.logger.output)
        self.assertNothingLost()


class ManualTest(PowerTestBase):
    """Manual level: a recommendation, applied by the operator."""

    HOSTS = ('host1', 'host2', 'host3')
    DRS = dict(PowerTestBase.DRS, power_management='manual',
               power_reserve_hosts=0)

    def test_standby_recommendation_applied(self):
        self.boot_servers({'host1': 1, 'host2': 1})
        self.period()
        record = self.period()
        self.assertEqual([('standby', 'host3')], self.actions(record))
        self.assertEqual(({}, 'enabled'), (self.rows(),
                                           self.service('host3')['status']))
        [found] = self.cli(recommend.show, all=False)
        self.assertEqual(('standby', 'host3', 'pending', ''), (
            found['action'], found['source'], found['state'],
            found['instance']))
        self.assertIn('cheapest to empty', found['reason'])
        # Recommended again next period: the same recommendation.
        self.period()
        self.assertEqual([found['id']], [
            r['id'] for r in self.cli(recommend.show, all=False)])
        self.assertEqual([], self.driver.calls)

        self.assertEqual({'approved': [found['id']]}, self.cli(
            recommend.apply, ident=found['id'], all=False))
        self.period()
        self.assertEqual('entering', self.power_state('host3'))
        self.assertTrue(self.service('host3')['disabled_reason'].startswith(
            'nova-drs: standby'))
        self.until('host3', 'standby', periods=2)
        self.assertEqual([('power_off', 'host3')], self.driver.calls)
        [done] = [r for r in self.cli(recommend.show, all=True)
                  if r['id'] == found['id']]
        self.assertEqual('completed', done['state'])
        self.assertNothingLost()
