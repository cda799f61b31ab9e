"""Per-host settings from aggregate metadata, never trusting it."""

import testtools
from nova import objects

from nova_drs_scheduler import log_once
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.rebalance import aggregate_settings

CONFIG = model.PlannerConfig(cpu_threshold=80.0, ram_threshold=90.0)


def agg(name, **metadata):
    return objects.Aggregate(id=1, name=name, hosts=['h'], metadata=metadata)


def settings(*aggregates, config=CONFIG):
    return aggregate_settings.host_settings('h', aggregates, config)


class HostSettingsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        log_once.reset()

    def test_defaults_without_aggregates(self):
        self.assertEqual(
            aggregate_settings.HostSettings('global', None, 80.0, 90.0,
                                            False), settings())
        # Spelled out: the comparison above shares the class's defaults.
        found = settings()
        self.assertEqual((None, False, 'off'), (
            found.automation, found.automation_off, found.power_level))

    def test_strictest_threshold_and_aggregate_mode_win(self):
        result = settings(agg('b', drs_cpu_threshold='70',
                              drs_mode='global'),
                          agg('a', drs_cpu_threshold='60',
                              drs_ram_threshold='75', drs_mode='aggregate'))
        self.assertEqual(('aggregate', 'a,b', 60.0, 75.0), (
            result.mode, result.pool, result.cpu_threshold,
            result.ram_threshold))

    def test_opt_out_keys(self):
        self.assertTrue(settings(agg('a', drs_exclude='true')).excluded)
        self.assertTrue(settings(agg('a', drs_enabled='False')).excluded)
        self.assertFalse(settings(agg('a', drs_enabled='yes')).excluded)

    def test_invalid_values_are_ignored_and_logged_once(self):
        bad = agg('a', drs_cpu_threshold='abc', drs_ram_threshold='150',
                  drs_mode='sideways', drs_exclude='maybe')
        with self.assertLogs(aggregate_settings.LOG.logger) as logs:
            result = settings(bad)
            settings(bad)
        self.assertEqual(aggregate_settings.HostSettings(
            'global', 'a', 80.0, 90.0, False), result)
        self.assertEqual(4, len(logs.records))

    def test_thresholds_of_0_and_100_are_kept(self):
        # Both ends are valid: 100, never judged over; 0, over at any load.
        for cpu, ram in (('0', '100'), ('100', '0')):
            result = settings(agg('a', drs_cpu_threshold=cpu,
                                  drs_ram_threshold=ram))
            self.assertEqual((float(cpu), float(ram)), (
                result.cpu_threshold, result.ram_threshold))

    def test_thresholds_just_outside_0_100_are_ignored_for_the_host(self):
        for raw in ('-1', '101', '-0.5', '100.5'):
            log_once.reset()
            with self.assertLogs(aggregate_settings.LOG.logger) as logs:
                result = settings(agg('a', drs_cpu_threshold=raw,
                                      drs_ram_threshold=raw))
            self.assertEqual((80.0, 90.0), (
                result.cpu_threshold, result.ram_threshold), raw)
            self.assertEqual(2, len(logs.records), raw)
            self.assertIn(repr(raw), logs.output[0])

    def test_automation_level_most_cautious_wins(self):
        self.assertIsNone(settings().automation)
        self.assertEqual('automatic', settings(
            agg('a', drs_automation='Automatic')).automation)
        self.assertEqual('manual', settings(
            agg('a', drs_automation='automatic'),
            agg('b', drs_automation='manual')).automation)
        self.assertEqual('off', settings(
            agg('a', drs_automation='off'),
            agg('b', drs_automation='manual')).automation)
        with self.assertLogs(aggregate_settings.LOG.logger) as logs:
            self.assertIsNone(settings(
                agg('a', drs_automation='sometimes')).automation)
        self.assertIn('drs_automation', logs.output[0])

    def test_power_management_level_overrides_conf_most_cautious_wins(self):
        def level(*aggregates, default='off'):
            return aggregate_settings.host_settings(
                'h', aggregates, CONFIG, default).power_level
        self.assertEqual('off', level())
        self.assertEqual('manual', level(default='manual'))
        self.assertEqual('automatic', level(
            agg('a', drs_power_management=' Automatic ')))
        self.assertEqual('off', level(
            agg('a', drs_power_management='automatic'),
            agg('b', drs_power_management='off'), default='automatic'))
        self.assertEqual('manual', level(
            agg('a', drs_power_management='automatic'),
            agg('b', drs_power_management='manual')))
        with self.assertLogs(aggregate_settings.LOG.logger) as logs:
            self.assertEqual('manual', level(
                agg('a', drs_power_management='eco'), default='manual'))
            # Logged once per host, aggregate and value.
            level(agg('a', drs_power_management='eco'))
        self.assertEqual(1, len(logs.output))
        self.assertIn('drs_power_management', logs.output[0])

    def test_any_enabled(self):
        self.assertFalse(aggregate_settings.any_enabled([
            agg('a'), agg('b', drs_automation='off'),
            agg('c', drs_automation='bogus')]))
        self.assertTrue(aggregate_settings.any_enabled([
            agg('a'), agg('b', drs_automation=' Manual ')]))
