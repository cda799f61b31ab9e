"""Option validation: a bad value stops the service, naming the option."""


from nova import test
from oslo_config import cfg

from nova_drs_scheduler import conf
from nova_drs_scheduler.conf import power as power_conf
from nova_drs_scheduler.filters import utilization as util_filter
from nova_drs_scheduler.weighers import utilization as util_weigher
from tests import tempfiles


class ValidateTest(test.NoDBTestCase):

    def _conf_from_file(self, text):
        """A ConfigOpts parsed from a real file, as the service does."""
        path = tempfiles.write(self, text, '.conf')
        parsed = cfg.ConfigOpts()
        conf.register_opts(parsed)
        parsed(['--config-file', path], project='nova',
               default_config_files=[])
        return parsed

    def test_defaults_are_valid(self):
        conf.validate()
        conf.validate(self._conf_from_file('[drs]\n'))

    def test_out_of_bounds_value_names_the_option(self):
        parsed = self._conf_from_file('[drs]\nmax_cpu_utilization = 150\n')
        error = self.assertRaises(conf.ConfigError, conf.validate, parsed)
        self.assertIn('[drs] max_cpu_utilization', str(error))

    def test_bad_choice_names_the_option(self):
        parsed = self._conf_from_file('[drs]\nmissing_metrics_action = no\n')
        error = self.assertRaises(conf.ConfigError, conf.validate, parsed)
        self.assertIn('[drs] missing_metrics_action', str(error))

    def test_not_a_number_names_the_option(self):
        parsed = self._conf_from_file('[drs]\nmetrics_max_age = soon\n')
        error = self.assertRaises(conf.ConfigError, conf.validate, parsed)
        self.assertIn('[drs] metrics_max_age', str(error))

    def test_both_weights_zero_stops_filter_and_weigher(self):
        self.flags(cpu_utilization_weight=0, ram_utilization_weight=0,
                   group='drs')
        error = self.assertRaises(conf.ConfigError, conf.validate)
        self.assertIn('cpu_utilization_weight', str(error))
        # Stock nova-scheduler builds weighers at start: it stops there.
        self.assertRaises(conf.ConfigError, util_weigher.UtilizationWeigher)
        self.assertRaises(conf.ConfigError, util_filter.UtilizationFilter)

    def test_list_opts_covers_the_drs_group(self):
        groups = {group.name: opts for group, opts in conf.list_opts()
                  if group is not None}
        names = {opt.name for opt in groups['drs']}
        self.assertIn('max_cpu_utilization', names)
        self.assertIn('utilization_weight_multiplier', names)
        for opt in groups['drs']:
            self.assertTrue(opt.help, opt.name)


class RegisterTest(test.NoDBTestCase):

    def test_private_configs_do_not_share_values(self):
        # The CLI and the simulator parse their own ConfigOpts; a value set
        # on one must not show through another (oslo.config shares the
        # options of a group object registered twice).
        first, second = cfg.ConfigOpts(), cfg.ConfigOpts()
        for parsed in (first, second):
            conf.register_opts(parsed)
            parsed([], default_config_files=[])
        first.set_override('rebalance_interval', 30, group='drs')
        self.assertEqual(30, first.drs.rebalance_interval)
        self.assertEqual(60, second.drs.rebalance_interval)


class WattsModelTest(ValidateTest):
    """``[drs] power_idle_watts`` and ``power_standby_watts``: both or
    neither, a standby that draws less than idle, never negative."""

    def test_unset_is_valid_and_gives_no_kwh(self):
        parsed = self._conf_from_file('[drs]\n')
        conf.validate(parsed)
        self.assertIsNone(power_conf.saved_kwh(parsed, 10.0))

    def test_kwh_saved_per_host_hour(self):
        parsed = self._conf_from_file(
            '[drs]\npower_idle_watts = 180\npower_standby_watts = 12.5\n')
        conf.validate(parsed)
        self.assertAlmostEqual(2 * 0.1675, power_conf.saved_kwh(parsed, 2.0))
        self.assertEqual(0.0, power_conf.saved_kwh(parsed, 0.0))

    def test_bad_values_name_the_option(self):
        for text, named in (
                ('power_idle_watts = 180\n', 'power_standby_watts'),
                ('power_standby_watts = 10\n', 'power_idle_watts'),
                ('power_idle_watts = 100\npower_standby_watts = 100\n',
                 'power_standby_watts'),
                ('power_idle_watts = -1\npower_standby_watts = 0\n',
                 'power_idle_watts'),
                ('power_idle_watts = 100\npower_standby_watts = nan\n',
                 'power_standby_watts'),
                ('power_idle_watts = lots\npower_standby_watts = 0\n',
                 'power_idle_watts')):
            parsed = self._conf_from_file('[drs]\n' + text)
            error = self.assertRaises(conf.ConfigError, conf.validate,
                                      parsed)
            self.assertIn(f'[drs] {named}', str(error))
