"""``[drs] aggressiveness``: the level sets the advanced options it
lists, an option set explicitly wins, and ``nova-drs status`` shows both."""

import contextlib
import io
import json
import os
import tempfile
import types

from nova import test

from nova_drs_scheduler import conf
from nova_drs_scheduler import from_conf
from nova_drs_scheduler.cli import inspect
from nova_drs_scheduler.conf import rebalance
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cli as simulate_cli

#: Each option of the level, and whether a higher value is more
#: aggressive (True) or more conservative (False).
MORE_AGGRESSIVE_WHEN_HIGHER = {
    'stabilization': False, 'min_improvement': False,
    'max_migrations_per_period': True, 'instance_cooldown': False,
    'benefit_horizon': False, 'level_gap': None}


def planner_values(config: model.PlannerConfig) -> dict:
    return {name: getattr(config, name) for name in (
        'stabilization', 'min_improvement', 'max_migrations_per_period',
        'benefit_horizon', 'level_gap')}


def level_values(level: int) -> dict:
    return {name: values[level - 1]
            for name, values in rebalance.LEVELS.items()
            if name != 'instance_cooldown'}


class LevelTableTest(test.NoDBTestCase):

    def opts(self):
        return {opt.name: opt for opt in rebalance.OPTS}

    def test_the_default_level_is_every_options_default(self):
        opts = self.opts()
        self.assertEqual(3, opts['aggressiveness'].default)
        for name, values in rebalance.LEVELS.items():
            self.assertEqual(opts[name].default, values[2], name)
        self.assertEqual(model.PlannerConfig(),
                         from_conf.planner_config(conf.CONF))
        self.assertEqual(3600, from_conf.instance_cooldown(conf.CONF))

    def test_five_levels_each_within_the_options_bounds(self):
        opts = self.opts()
        for name, values in rebalance.LEVELS.items():
            self.assertEqual(5, len(values), name)
            for value in values:
                if opts[name].type.min is not None:
                    self.assertGreaterEqual(value, opts[name].type.min)
                if opts[name].type.max is not None:
                    self.assertLessEqual(value, opts[name].type.max)

    def test_levels_run_from_conservative_to_aggressive(self):
        self.assertEqual(set(MORE_AGGRESSIVE_WHEN_HIGHER),
                         set(rebalance.LEVELS))
        for name, higher in MORE_AGGRESSIVE_WHEN_HIGHER.items():
            values = list(rebalance.LEVELS[name])
            if higher is None:  # level_gap: 0 is off, then narrower.
                self.assertEqual([0.0, 0.0], values[:2])
                self.assertEqual(sorted(values[2:], reverse=True),
                                 values[2:])
                continue
            self.assertEqual(sorted(values, reverse=not higher), values,
                             name)

    def test_the_options_it_sets_are_advanced(self):
        opts = self.opts()
        for name in rebalance.LEVELS:
            self.assertTrue(opts[name].advanced, name)
            self.assertIn('aggressiveness', opts[name].help)
        self.assertFalse(opts['aggressiveness'].advanced)
        for name in rebalance.LEVELS:
            self.assertIn(f'``{name}``', opts['aggressiveness'].help)


class LevelMappingTest(test.NoDBTestCase):

    def test_each_level_sets_the_planner_windows_and_cooldown(self):
        for level in range(1, 6):
            self.flags(aggressiveness=level, group='drs')
            expected = level_values(level)
            self.assertEqual(expected, planner_values(
                from_conf.planner_config(conf.CONF)), level)
            self.assertEqual(expected['stabilization'],
                             from_conf.metrics_windows(conf.CONF)
                             .stabilization, level)
            self.assertEqual(rebalance.LEVELS['instance_cooldown'][level - 1],
                             from_conf.instance_cooldown(conf.CONF))
            self.assertEqual({}, rebalance.overrides(conf.CONF))

    def test_an_option_set_explicitly_wins_over_the_level(self):
        self.flags(aggressiveness=1, stabilization=2, min_improvement=7.0,
                   instance_cooldown=600, group='drs')
        values = planner_values(from_conf.planner_config(conf.CONF))
        self.assertEqual(dict(level_values(1), stabilization=2,
                              min_improvement=7.0), values)
        self.assertEqual(2, from_conf.metrics_windows(conf.CONF)
                         .stabilization)
        self.assertEqual(600, from_conf.instance_cooldown(conf.CONF))
        self.assertEqual({'stabilization': 2, 'min_improvement': 7.0,
                          'instance_cooldown': 600},
                         rebalance.overrides(conf.CONF))

    def test_an_override_cleared_leaves_the_option_to_the_level(self):
        # oslo.config still reports the override's location once it is
        # cleared; the value, back to the default, says it is gone.
        conf.CONF.set_override('stabilization', 2, 'drs')
        conf.CONF.clear_override('stabilization', 'drs')
        self.flags(aggressiveness=1, group='drs')
        self.assertEqual(3, rebalance.value(conf.CONF, 'stabilization'))

    def test_other_options_ignore_the_level(self):
        self.flags(aggressiveness=5, margin=4.0, group='drs')
        self.assertEqual(4.0, rebalance.value(conf.CONF, 'margin'))
        self.assertEqual(4.0, from_conf.planner_config(conf.CONF).margin)


class ConfigFileTest(test.NoDBTestCase):
    """The simulator's ``--config-file`` and the service's check at
    start, on files as an operator writes them."""

    def write(self, text: str) -> str:
        handle, path = tempfile.mkstemp(suffix='.conf')
        with os.fdopen(handle, 'w') as config:
            config.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def test_the_simulator_honours_the_level_and_overrides(self):
        path = self.write('[drs]\naggressiveness = 5\n'
                          'max_migrations_per_period = 2\n')
        parsed = simulate_cli._drs([path])
        self.assertEqual(dict(level_values(5), max_migrations_per_period=2),
                         planner_values(from_conf.planner_config(parsed)))
        self.assertEqual(1800, from_conf.instance_cooldown(parsed))
        self.assertEqual({'max_migrations_per_period': 2},
                         rebalance.overrides(parsed))

    def test_a_value_in_the_file_wins_even_at_its_default(self):
        path = self.write('[drs]\naggressiveness = 1\nstabilization = 1\n')
        parsed = simulate_cli._drs([path])
        self.assertEqual(1, from_conf.planner_config(parsed).stabilization)
        self.assertEqual({'stabilization': 1}, rebalance.overrides(parsed))

    def test_a_level_out_of_range_names_the_option(self):
        for bad in ('0', '6', 'high'):
            path = self.write(f'[drs]\naggressiveness = {bad}\n')
            error = self.assertRaises(conf.ConfigError, simulate_cli._drs,
                                      [path])
            self.assertIn('[drs] aggressiveness', str(error))


class StatusTest(test.NoDBTestCase):

    def status(self, json_output=False):
        self.stub_out(
            'nova_drs_scheduler.cli.cloud.dry_run', lambda conf: {})
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            inspect.status(types.SimpleNamespace(json=json_output),
                           conf.CONF)
        text = stdout.getvalue()
        return json.loads(text) if json_output else text

    def test_shows_the_level_in_force(self):
        text = self.status()
        self.assertIn('Aggressiveness 3 (balanced; 1 conservative ... 5 '
                      'aggressive)', text)
        self.assertNotIn('set in the configuration', text)
        row = next(line for line in text.splitlines()
                   if line.startswith('instance_cooldown'))
        self.assertEqual(['instance_cooldown', '3600', 'level'],
                         row.split())

    def test_shows_each_override_beside_the_levels_value(self):
        self.flags(aggressiveness=1, min_improvement=7.0, group='drs')
        text = self.status()
        self.assertIn('Aggressiveness 1 (conservative;', text)
        row = next(line for line in text.splitlines()
                   if line.startswith('min_improvement'))
        self.assertIn('7', row)
        self.assertIn('set in the configuration (level: 15)', row)
        row = next(line for line in text.splitlines()
                   if line.startswith('stabilization'))
        self.assertEqual(['stabilization', '3', 'level'], row.split())
        found = self.status(json_output=True)['aggressiveness']
        self.assertEqual(1, found['aggressiveness'])
        self.assertEqual({'value': 7.0, 'level_value': 15.0,
                          'overridden': True},
                         found['options']['min_improvement'])
        self.assertEqual({'value': 3, 'level_value': 3,
                          'overridden': False},
                         found['options']['stabilization'])
