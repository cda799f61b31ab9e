"""UtilizationFilter: measured CPU and RAM ceilings."""


from nova_drs_scheduler.filters import utilization
from tests.unit import fakes


class UtilizationFilterTest(fakes.LeanTestCase):

    def setUp(self):
        super().setUp()
        self.flags(max_cpu_utilization=80, group='drs')
        # Options are read at each call: flags set later still apply.
        self.filter = utilization.UtilizationFilter()

    def passes(self, state):
        return self.filter.host_passes(state, fakes.spec())

    def test_cpu_under_ceiling_passes(self):
        self.assertTrue(self.passes(fakes.host(cpu=80)))

    def test_cpu_over_ceiling_fails(self):
        self.assertFalse(self.passes(fakes.host(cpu=81)))

    def test_missing_metrics_pass_by_default_and_log_once(self):
        with self.assertLogs('nova_drs_scheduler.filters.utilization',
                             level='WARNING') as logs:
            self.assertTrue(self.passes(fakes.host()))
            self.assertTrue(self.passes(fakes.host()))
        self.assertEqual(1, len(logs.output))
        self.assertIn('host1 has no usable cpu.percent metric; it passes',
                      logs.output[0])

    def test_pass_read_from_a_config_file_passes(self):
        # A value parsed from nova.conf is a new string object, not the
        # interned default: it must compare equal, not identical.
        self.flags(missing_metrics_action=''.join(['pa', 'ss']), group='drs')
        self.assertTrue(self.passes(fakes.host()))

    def test_missing_metrics_can_be_rejected(self):
        self.flags(missing_metrics_action='reject', group='drs')
        with self.assertLogs('nova_drs_scheduler.filters.utilization',
                             level='WARNING') as logs:
            self.assertFalse(self.passes(fakes.host()))
        self.assertIn('host1 has no usable cpu.percent metric; it is '
                      'rejected', logs.output[0])
        self.assertTrue(self.passes(fakes.host(cpu=10)))

    def test_other_metrics_only_count_as_missing(self):
        self.flags(missing_metrics_action='reject', group='drs')
        state = fakes.host()
        state.metrics = fakes.metrics(99, name='cpu.user.percent')
        self.assertFalse(self.passes(state))

    def test_stale_metrics_count_as_missing(self):
        self.flags(metrics_max_age=60, group='drs')
        self.assertTrue(self.passes(fakes.host(cpu=99, cpu_age=120)))
        self.flags(missing_metrics_action='reject', group='drs')
        self.assertFalse(self.passes(fakes.host(cpu=10, cpu_age=120)))
        self.assertTrue(self.passes(fakes.host(cpu=10, cpu_age=30)))

    def test_nonsense_values_count_as_missing(self):
        self.flags(missing_metrics_action='reject', group='drs')
        for value in (-1, 101, 10 ** 6):
            with self.assertLogs('nova_drs_scheduler.utilization',
                                 level='WARNING'):
                self.assertFalse(self.passes(fakes.host(cpu=value)), value)

    def test_broken_metrics_object_never_raises(self):
        state = fakes.host()
        state.metrics = 42
        self.assertTrue(self.passes(state))

    def test_ram_is_checked_only_when_configured(self):
        state = fakes.host(cpu=10, total_usable_ram_mb=1000, free_ram_mb=50)
        self.assertTrue(self.passes(state))
        self.flags(max_ram_utilization=90, group='drs')
        self.assertFalse(self.passes(state))
        state.free_ram_mb = 200
        self.assertTrue(self.passes(state))

    def test_ram_exactly_at_its_ceiling_passes(self):
        self.flags(max_ram_utilization=90, group='drs')
        state = fakes.host(cpu=10, total_usable_ram_mb=1000, free_ram_mb=100)
        self.assertTrue(self.passes(state))
        state.free_ram_mb = 99
        self.assertFalse(self.passes(state))

    def test_host_without_ram_inventory_is_judged_on_cpu(self):
        self.flags(max_ram_utilization=90, group='drs')
        for total in (0, None):
            state = fakes.host(cpu=10, total_usable_ram_mb=total,
                               free_ram_mb=0)
            self.assertTrue(self.passes(state), total)
            state.metrics = fakes.metrics(81)
            self.assertFalse(self.passes(state), total)

    def test_rebuild_on_a_busy_host_is_not_refused(self):
        # A rebuild stays on its host: Nova must not run this filter then.
        state = fakes.host(cpu=99)
        request = fakes.spec()
        request.scheduler_hints = {'_nova_check_type': ['rebuild']}
        self.assertEqual([state], list(self.filter.filter_all([state],
                                                              request)))
        del request.scheduler_hints
        self.assertEqual([], list(self.filter.filter_all([state], request)))
