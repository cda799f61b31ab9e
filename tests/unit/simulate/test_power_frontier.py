"""Power management's frontier with hindsight (tools/power_frontier.py)."""

import importlib.util
import io
import types

import fixtures
import testtools

from nova_drs_scheduler.planning import outlook
from nova_drs_scheduler.simulate import engine
from tests import tool_scripts

#: A small generated day: a cluster of a few hosts, quick to replay.
_ARGV = ('--vms', '60', '--shape', 'day-night', '--peak-load', '50',
         '--power', '--seed', '1')


def _tool():
    return tool_scripts.load('power_frontier')


def _run(kind, band_low, **figures):
    run = dict(trace='t', seed=1, band_low=band_low, kind=kind,
               energy_kwh=10.0, bound_kwh=8.0, overloaded_host_periods=10,
               overload_starts=8, unserved_core_minutes=0.0, migrations=5)
    run.update(figures)
    return run


@testtools.skipUnless(importlib.util.find_spec('tabulate'),
                      'tabulate is not installed')
class PowerFrontierTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tool = _tool()
        self.bench = tool_scripts.load('bench_power')

    def _hindsight(self, demand, step_seconds=300.0):
        setup = self.bench.prepared(_ARGV)
        return self.tool.HindsightPower(setup.config, setup.power_config,
                                        demand, step_seconds)

    def test_hindsight_reads_the_most_to_come_within_its_horizons(self):
        strategy = self._hindsight([1.0, 5.0, 2.0, 9.0, 3.0, 7.0])
        reach = 2 * strategy.power_config.horizon     # RAMP_HORIZONS
        steps = int(reach // 300.0)
        self.assertEqual(max([1.0, 5.0, 2.0, 9.0, 3.0, 7.0][:steps + 1]),
                         strategy.ahead(0.0))
        # Near the end, the window stops at the last step.
        self.assertEqual(7.0, strategy.ahead(5 * 300.0))
        self.assertEqual(7.0, strategy.ahead(99 * 300.0))
        setup = self.bench.prepared(_ARGV)
        raised = self.tool.HindsightPower(
            setup.config, setup.power_config, [2.0, 4.0], 300.0, 25.0)
        self.assertEqual(5.0, raised.ahead(300.0))
        self.assertEqual(('hindsight +25 %', 'hindsight', 'ours', None),
                         (self.tool.label('hindsight', 25.0),
                          self.tool.label('hindsight', 0.0),
                          self.tool.label('ours', 0.0),
                          self.tool.label(None, 0.0)))

    def test_the_demand_is_the_vms_cores(self):
        # Two VMs of 2 and 4 vCPUs at 50 % and 25 %, then 100 % and 0 %.
        def vm(index, vcpus):
            return types.SimpleNamespace(
                index=index, flavor=types.SimpleNamespace(vcpus=vcpus))
        setup = types.SimpleNamespace(
            vms=[vm(0, 2), vm(1, 4)],
            trace=types.SimpleNamespace(steps=[[50.0, 25.0], [100.0, 0.0]]))
        self.assertEqual([2.0, 2.0], self.tool.demand(setup))

    def test_the_planner_reads_hindsight_not_its_own_forecast(self):
        setup = self.bench.prepared(_ARGV)
        demand = self.tool.demand(setup)
        strategy = self.tool.HindsightPower(
            setup.config, setup.power_config, demand,
            setup.trace.step_seconds)
        engine.run(setup.trace, setup.vms, setup.spec, strategy,
                   setup.settings, power=setup.power)
        [state] = strategy.forecasts.values()
        now = state.holt.time
        # What the last period saw: the trace's own demand to come, at
        # every horizon, with no spread.
        for seconds in (0.0, 600.0, 7200.0):
            self.assertEqual((strategy.ahead(now), 0.0),
                             outlook.ahead(state, seconds))

    def test_table_sums_seeds_and_gives_the_allowance(self):
        t = self.tool
        runs = [_run(None, None), _run(None, None, seed=2),
                _run(t.OURS, 45.0, energy_kwh=9.0, overloaded_host_periods=30,
                     overload_starts=25),
                _run(t.OURS, 45.0, seed=2, energy_kwh=9.0),
                _run(t.HINDSIGHT, 45.0, energy_kwh=8.5),
                _run(t.HINDSIGHT, 45.0, seed=2, energy_kwh=8.5)]
        text = t.table(runs)
        rows = [[cell.strip() for cell in line.split('|')[1:-1]]
                for line in text.splitlines()[2:] if line.startswith('|')]
        self.assertEqual(
            [['balanced (every host on)', '-', '-', '20', '16', '0', '10'],
             ['ours', '45', '50', '40', '33', '0', '10'],
             ['hindsight', '45', '75', '20', '16', '0', '10']], rows)
        self.assertIn("allowed by the bench's bar: 30", text)

    def test_main_prints_each_forecast_at_each_band(self):
        out = self.useFixture(fixtures.MonkeyPatch('sys.stdout',
                                                   io.StringIO())).new_value
        self.assertEqual(0, self.tool.main(
            ['--synthetic-vms', '60', '--peak-load', '50', '--seeds', '1',
             '--band-low', '35,45', '--headroom', '0,10', '--jobs', '1']))
        shown = [line.split('|')[1:3] for line in out.getvalue().splitlines()
                 if line.startswith('| ours') or line.startswith('| hind')]
        self.assertEqual([('ours', '35'), ('ours', '45'),
                          ('hindsight', '35'), ('hindsight', '45'),
                          ('hindsight +10 %', '35'),
                          ('hindsight +10 %', '45')],
                         [(a.strip(), b.strip()) for a, b in shown])

    def test_bad_options_are_refused_by_name(self):
        err = self.useFixture(fixtures.MonkeyPatch('sys.stderr',
                                                   io.StringIO())).new_value
        for argv, named in ((['--forecasts', 'ours,crystal'], '--forecasts'),
                            (['--band-low', '45,x'], '--band-low'),
                            (['--band-low', '81'], '--band-low'),
                            (['--headroom', '-5'], '--headroom')):
            self.assertRaises(SystemExit, self.tool.main,
                              ['--synthetic-vms', '60'] + argv)
            self.assertIn(named, err.getvalue())
