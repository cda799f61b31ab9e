"""The [drs] rebalancer options: contract, cross-checks, planner config."""

from nova import test

from nova_drs_scheduler import conf
from nova_drs_scheduler import from_conf
from nova_drs_scheduler.conf import rebalance
from nova_drs_scheduler.planning import model

OPTION_NAMES = {
    'automation', 'mode', 'unaggregated_hosts', 'cpu_threshold',
    'ram_threshold', 'window', 'stabilization', 'policy', 'margin',
    'min_improvement', 'max_migrations_per_period',
    'max_concurrent_migrations_per_host', 'max_concurrent_migrations',
    'max_concurrent_migrations_per_violated_host',
    'instance_cooldown', 'metrics_source', 'static_metrics_file',
    'rebalance_interval', 'instance_metrics_timeout'}


class RebalanceOptionsTest(test.NoDBTestCase):

    def test_operator_contract_names(self):
        groups = {group.name: {o.name for o in opts}
                  for group, opts in conf.list_opts() if group is not None}
        self.assertTrue(OPTION_NAMES <= groups['drs'])
        for opt in rebalance.OPTS:
            self.assertTrue(opt.help, opt.name)

    def test_defaults_are_valid_and_map_to_the_planner(self):
        conf.validate()
        config = from_conf.planner_config(conf.CONF)
        self.assertEqual(model.PlannerConfig(), config)

    def test_planner_config_follows_options(self):
        self.flags(policy='seed', mode='aggregate', unaggregated_hosts='pool',
                   cpu_threshold=70.0, ram_threshold=85.0, stabilization=2,
                   margin=5.0, min_improvement=1.0,
                   max_migrations_per_period=3,
                   max_concurrent_migrations_per_host=2,
                   max_concurrent_migrations_per_violated_host=3,
                   max_concurrent_migrations=8, destination_deviations=1.5,
                   level_gap=7.0, level_band=12.0, level_rise_rate=1.5,
                   group='drs')
        self.assertEqual(
            model.PlannerConfig(
                policy='seed', mode='aggregate', unaggregated_hosts='pool',
                cpu_threshold=70.0, ram_threshold=85.0, stabilization=2,
                margin=5.0, min_improvement=1.0, max_migrations_per_period=3,
                max_concurrent_migrations_per_host=2,
                max_concurrent_migrations_per_violated_host=3,
                max_concurrent_migrations=8, destination_deviations=1.5,
                level_gap=7.0, level_band=12.0, level_rise_rate=1.5),
            from_conf.planner_config(conf.CONF))

    def test_drain_concurrency_follows_novas_unless_set(self):
        def drain():
            return from_conf.planner_config(
                conf.CONF).drain_max_concurrent_migrations_per_host
        self.assertEqual(1, drain())  # Nova's default.
        self.flags(max_concurrent_live_migrations=3)
        self.assertEqual(3, drain())
        # Nova's deprecated 0 ("unlimited"): the cloud's total.
        self.flags(max_concurrent_live_migrations=0)
        self.flags(max_concurrent_migrations=6, group='drs')
        self.assertEqual(6, drain())
        self.flags(drain_max_concurrent_migrations_per_host=2, group='drs')
        self.assertEqual(2, drain())

    def test_metrics_windows_follow_options(self):
        self.flags(window=5, stabilization=4, metrics_max_age=99,
                   cpu_threshold=70.0, level_rise_points=12.5,
                   level_rise_halflife=600, group='drs')
        windows = from_conf.metrics_windows(conf.CONF)
        self.assertEqual((5, 4, 99, 70.0, 12.5, 600), (
            windows.window, windows.stabilization, windows.max_age,
            windows.cpu_threshold, windows.rise_points,
            windows.rise_halflife))

    def test_unknown_policy_is_refused(self):
        self.flags(policy='greedy', group='drs')
        error = self.assertRaises(conf.ConfigError, conf.validate)
        self.assertIn('[drs] policy', str(error))
        self.assertIn('balanced', str(error))

    def test_unknown_metrics_source_is_refused_when_rebalancing(self):
        self.flags(metrics_source='nope', group='drs')
        conf.validate()  # automation = off: the source is never loaded
        self.flags(automation='manual', group='drs')
        error = self.assertRaises(conf.ConfigError, conf.validate)
        self.assertIn('[drs] metrics_source', str(error))

    def test_static_source_needs_its_file(self):
        self.flags(automation='automatic', metrics_source='static',
                   group='drs')
        error = self.assertRaises(conf.ConfigError, conf.validate)
        self.assertIn('[drs] static_metrics_file', str(error))
        self.flags(static_metrics_file='/tmp/metrics.json', group='drs')
        conf.validate()

    def test_margin_must_leave_room_under_the_thresholds(self):
        self.flags(margin=60.0, cpu_threshold=60.0, group='drs')
        error = self.assertRaises(conf.ConfigError, conf.validate)
        self.assertIn('[drs] margin', str(error))
