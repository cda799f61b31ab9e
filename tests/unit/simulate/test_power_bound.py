"""The hindsight bound of power management (tools/benchlib/power_bound.py).

The arithmetic is pinned on hand-computed figures; the accounting is held
against the simulator's own: with every host on and nothing moving, the
bound's energy is the energy the engine measures.
"""

import testtools

from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies
from tests import tool_scripts

power_bound = tool_scripts.load('benchlib.power_bound')

SIZES = dict(host_vcpus=32, host_memory_mb=1000, band_high=80.0,
             ram_threshold=50.0, min_hosts=2, reserve_hosts=1, hosts=10)


class HostsNeededTest(testtools.TestCase):

    def test_cpu_at_the_bands_top_plus_the_reserve(self):
        # 100 cores at 25.6 a host: 4 hosts, 5 with the reserve.
        self.assertEqual(5, power_bound.hosts_needed(100.0, 0.0, **SIZES))
        # Exactly three hosts' worth needs three, not four.
        self.assertEqual(4, power_bound.hosts_needed(76.8, 0.0, **SIZES))

    def test_ram_under_its_threshold_when_it_needs_more(self):
        # 2600 MB at 500 MB a host: 6 hosts, 7 with the reserve.
        self.assertEqual(7, power_bound.hosts_needed(10.0, 2600.0, **SIZES))

    def test_never_under_the_minimum_nor_over_the_cluster(self):
        self.assertEqual(2, power_bound.hosts_needed(
            0.0, 0.0, **dict(SIZES, reserve_hosts=0)))
        self.assertEqual(10, power_bound.hosts_needed(1000.0, 0.0, **SIZES))

    def test_hosts_on_a_boot_ahead(self):
        self.assertEqual([3, 5, 5, 5, 2, 2],
                         power_bound.hosts_on([3, 2, 2, 5, 2, 2], 2))
        self.assertEqual([3, 2, 5], power_bound.hosts_on([3, 2, 5], 0))


class EnergyTest(testtools.TestCase):

    def test_idle_span_and_standby_per_period(self):
        # Period 1: 2 hosts on at 16 cores of 32 (idle 2 x 100, span
        # 250 x 0.5), 2 in standby at 10 W: 345 W.  Period 2: 4 on,
        # 64 cores: 400 + 500 = 900 W.  An hour each.
        kwh = power_bound.energy_kwh(
            [16.0, 64.0], [2, 4], hosts=4, host_vcpus=32, interval=3600.0,
            idle_watts=100.0, peak_watts=350.0, standby_watts=10.0)
        self.assertAlmostEqual(1.245, kwh)

    def test_demand_over_the_hosts_on_draws_their_peak_only(self):
        kwh = power_bound.energy_kwh(
            [200.0], [2], hosts=2, host_vcpus=32, interval=3600.0,
            idle_watts=100.0, peak_watts=350.0, standby_watts=10.0)
        self.assertAlmostEqual(0.7, kwh)

    def test_captured_share(self):
        self.assertEqual(50.0, power_bound.captured(9.0, 10.0, 8.0))
        self.assertEqual(-50.0, power_bound.captured(11.0, 10.0, 8.0))
        self.assertIsNone(power_bound.captured(9.0, 10.0, 10.0))


class AgainstTheSimulatorTest(testtools.TestCase):

    def _setup(self, *argv):
        return cli.prepare(cli.parser().parse_args(
            ['--vms', '300', '--shape', 'day-night', '--power',
             '--step-seconds', '300', '--seed', '3', '--peak-load', '30',
             *argv]))

    def test_every_host_on_is_the_engines_energy_without_moves(self):
        setup = self._setup()
        result = engine.run(setup.trace, setup.vms, setup.spec,
                            strategies.build('none', setup.config, 3, {}),
                            setup.settings, power=setup.power)
        bound = power_bound.bound(setup)
        self.assertEqual(result.power['energy_kwh'],
                         bound['bound_all_on_kwh'])
        self.assertLess(bound['bound_kwh'], bound['bound_all_on_kwh'])

    def test_a_longer_boot_keeps_more_hosts_on(self):
        quick = power_bound.bound(self._setup('--boot-seconds', '0'))
        slow = power_bound.bound(self._setup('--boot-seconds', '7200'))
        self.assertLess(quick['bound_host_hours_on'],
                        slow['bound_host_hours_on'])
        self.assertLess(quick['bound_kwh'], slow['bound_kwh'])
