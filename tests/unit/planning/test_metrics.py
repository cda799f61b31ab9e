"""Sliding windows and stabilization counters, as in the seed design."""

import dataclasses

import testtools

from nova_drs_scheduler.planning import metrics


def windows(window=1, stabilization=3, max_age=180):
    return metrics.MetricsWindows(window=window, stabilization=stabilization,
                                  max_age=max_age, cpu_threshold=80.0,
                                  ram_threshold=90.0)


def feed(state, cpus, start=0, step=60, host='h1', ram=None):
    """One period per value; returns the host's statuses in order."""
    statuses = []
    for i, cpu in enumerate(cpus):
        now = start + i * step
        sample = None if cpu is None else metrics.HostSample(now, cpu, ram)
        statuses.append(state.update(now, {host: sample})[host])
    return statuses


class StabilizationTest(testtools.TestCase):

    def test_spike_shorter_than_stabilization_is_never_violated(self):
        statuses = feed(windows(), [95, 95, 50, 95, 95, 50])
        self.assertEqual([1, 2, 0, 1, 2, 0], [s.counter for s in statuses])
        self.assertFalse(any(s.violated for s in statuses))

    def test_violated_at_every_multiple_of_stabilization(self):
        statuses = feed(windows(), [95] * 9)
        self.assertEqual([False, False, True] * 3,
                         [s.violated for s in statuses])
        self.assertEqual(list(range(1, 10)), [s.counter for s in statuses])

    def test_one_period_under_resets_the_counter(self):
        statuses = feed(windows(), [95, 95, 79, 95, 95, 95])
        self.assertEqual([1, 2, 0, 1, 2, 3], [s.counter for s in statuses])
        self.assertEqual([False] * 5 + [True],
                         [s.violated for s in statuses])

    def test_at_threshold_is_not_over(self):
        statuses = feed(windows(), [80.0] * 3)
        self.assertEqual([0, 0, 0], [s.counter for s in statuses])

    def test_window_average_smooths_a_single_spike(self):
        statuses = feed(windows(window=3), [60, 60, 100, 60])
        # (60 + 60 + 100) / 3 = 73.3: under 80.
        self.assertAlmostEqual(220 / 3, statuses[2].cpu_percent)
        self.assertEqual(0, statuses[2].counter)
        self.assertEqual((60, 100, 60), statuses[3].window)

    def test_window_keeps_only_the_last_samples(self):
        statuses = feed(windows(window=2), [10, 90, 90])
        self.assertEqual((90, 90), statuses[-1].window)
        self.assertEqual(90, statuses[-1].cpu_percent)

    def test_ram_over_threshold_makes_the_host_over(self):
        statuses = feed(windows(), [10, 10, 10], ram=95.0)
        self.assertEqual(3, statuses[-1].counter)
        self.assertTrue(statuses[-1].violated)
        self.assertIn('ram 95.0% > 90%', statuses[-1].reason)

    def test_per_host_thresholds_override_the_defaults(self):
        state = windows(stabilization=1)
        sample = metrics.HostSample(0, 70.0)
        status = state.update(0, {'a': sample, 'b': sample},
                              thresholds={'a': (60.0, 90.0)})
        self.assertTrue(status['a'].violated)
        self.assertFalse(status['b'].violated)

    def test_reason_names_window_counter_and_threshold(self):
        status = feed(windows(window=2), [95, 95])[-1]
        self.assertIn('cpu 95.0% > 80%', status.reason)
        self.assertIn('average of 2 samples', status.reason)
        self.assertIn('over for 2 periods', status.reason)
        self.assertIn('not violated until 3', status.reason)

    def test_same_sample_read_twice_is_not_added_twice(self):
        state = windows(window=3)
        sample = metrics.HostSample(0, 95.0)
        for now in (0, 60):
            status = state.update(now, {'h1': sample})['h1']
        self.assertEqual((95.0,), status.window)
        self.assertEqual(2, status.counter)

    def test_sample_older_than_the_newest_kept_is_not_added(self):
        # A source may hand back an older reading (a lagging replica, a
        # retried scrape): only a reading newer than the newest sample in
        # the window is a new measurement.
        state = windows(window=3)
        for now, cpu in ((0, 50.0), (60, 60.0), (120, 70.0)):
            state.update(now, {'h1': metrics.HostSample(now, cpu)})
        for now, reread in ((180, 120), (240, 60)):
            status = state.update(now, {'h1': metrics.HostSample(reread,
                                                                  99.0)})
            self.assertEqual((50.0, 60.0, 70.0), status['h1'].window)
            self.assertEqual(60.0, status['h1'].cpu_percent)

    def test_ram_exactly_at_its_threshold_is_not_over(self):
        self.assertFalse(metrics.is_over(10.0, 90.0, 80.0, 90.0))
        self.assertTrue(metrics.is_over(10.0, 90.5, 80.0, 90.0))
        statuses = feed(windows(), [10, 10, 10], ram=90.0)
        self.assertEqual([0, 0, 0], [s.counter for s in statuses])

    def test_ram_is_averaged_over_the_samples_that_have_it(self):
        state = windows(window=3)
        for now, ram in ((0, 82.0), (60, None), (120, 100.0)):
            status = state.update(now, {'h1': metrics.HostSample(
                now, 10.0, ram)})['h1']
        self.assertEqual(91.0, status.ram_percent)
        self.assertEqual(1, status.counter)
        status = windows().update(0, {'h1': metrics.HostSample(0, 10.0)})
        self.assertIsNone(status['h1'].ram_percent)

    def test_update_is_deterministic(self):
        runs = [feed(windows(window=2), [95, 70, 99, None, 85])
                for _ in range(2)]
        self.assertEqual(runs[0], runs[1])


class StalenessTest(testtools.TestCase):

    def test_stale_sample_is_ignored_and_host_not_judged(self):
        state = windows(max_age=100)
        feed(state, [95, 95])
        status = state.update(1000, {'h1': metrics.HostSample(800, 95.0)})
        self.assertIsNone(status['h1'].cpu_percent)
        self.assertEqual(0, status['h1'].counter)
        self.assertEqual((), status['h1'].window)
        self.assertFalse(status['h1'].violated)
        self.assertIn('not judged', status['h1'].reason)

    def test_missing_sample_keeps_judging_until_the_last_goes_stale(self):
        state = windows(max_age=100)
        statuses = feed(state, [95, None, None], step=60)
        # t=60: the t=0 sample is 60 s old, still fresh: over again.
        self.assertEqual(2, statuses[1].counter)
        # t=120: 120 s old, stale: not judged, counter cleared.
        self.assertIsNone(statuses[2].cpu_percent)
        self.assertEqual(0, statuses[2].counter)

    def test_recovered_host_must_stabilize_again(self):
        state = windows(max_age=100)
        statuses = feed(state, [95, 95, None, None, 95, 95, 95])
        self.assertEqual([1, 2, 3, 0, 1, 2, 3],
                         [s.counter for s in statuses])
        self.assertEqual([False, False, True, False, False, False, True],
                         [s.violated for s in statuses])

    def test_hosts_left_out_are_forgotten(self):
        state = windows()
        feed(state, [95, 95])
        state.update(120, {})
        status = state.update(180, {'h1': metrics.HostSample(180, 95.0)})
        self.assertEqual(1, status['h1'].counter)

    def test_invalid_sizes_are_refused(self):
        self.assertRaises(ValueError, windows, window=0)
        self.assertRaises(ValueError, windows, stabilization=0)

    def test_sample_exactly_max_age_old_is_still_fresh(self):
        sample = metrics.HostSample(0, 95.0)
        status = windows(max_age=100).update(100, {'h1': sample})['h1']
        self.assertEqual(95.0, status.cpu_percent)
        self.assertEqual(1, status.counter)
        status = windows(max_age=100).update(100.5, {'h1': sample})['h1']
        self.assertIsNone(status.cpu_percent)

    def test_pre_outage_samples_never_count_after_recovery(self):
        # The window empties when the host goes stale, so the first
        # average after the outage is made of new samples only: 70% must
        # not be averaged with the 95% seen before the outage.
        state = windows(window=3, max_age=100)
        statuses = feed(state, [95, 95, 95, None, None, 70])
        self.assertTrue(statuses[2].violated)
        self.assertIsNone(statuses[4].cpu_percent)
        self.assertEqual((70,), statuses[5].window)
        self.assertEqual(70, statuses[5].cpu_percent)
        self.assertEqual(0, statuses[5].counter)


class ImmutabilityTest(testtools.TestCase):

    def test_samples_and_statuses_cannot_be_rewritten(self):
        # Windows keep the samples they are given and statuses go into the
        # decision records: neither may change after the fact.
        sample = metrics.HostSample(0, 95.0)
        status = windows().update(0, {'h1': sample})['h1']
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, sample,
                          'cpu_percent', 10.0)
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, status,
                          'violated', True)


class ReasonTest(testtools.TestCase):
    """The verdict texts operators read in the plan and the logs."""

    def test_violated(self):
        status = feed(windows(), [95, 95, 95])[-1]
        self.assertEqual('cpu 95.0% > 80% (average of 1 samples): over for '
                         '3 periods, stabilization 3: violated',
                         status.reason)

    def test_over_but_not_yet_violated_names_the_next_period(self):
        statuses = feed(windows(), [95] * 4)
        self.assertEqual('cpu 95.0% > 80% (average of 1 samples): over for '
                         '4 periods, stabilization 3: not violated until 6',
                         statuses[3].reason)
        self.assertTrue(statuses[1].reason.endswith('not violated until 3'))

    def test_under_threshold_names_both_resources(self):
        status = feed(windows(window=2), [50, 70], ram=20.0)[-1]
        self.assertEqual('cpu 60.0% <= 80%, ram 20.0% <= 90% (average of 2 '
                         'samples): under threshold', status.reason)

    def test_exactly_at_a_threshold_reads_as_under(self):
        status = feed(windows(), [80.0], ram=90.0)[-1]
        self.assertEqual('cpu 80.0% <= 80%, ram 90.0% <= 90% (average of 1 '
                         'samples): under threshold', status.reason)
        status = feed(windows(), [80.5], ram=90.5)[-1]
        self.assertTrue(status.reason.startswith(
            'cpu 80.5% > 80%, ram 90.5% > 90%'), status.reason)

    def test_not_judged(self):
        status = feed(windows(), [None])[-1]
        self.assertEqual('no fresh CPU metrics: not judged', status.reason)

    def test_without_samples_no_average_is_claimed(self):
        self.assertEqual('cpu 95.0% > 80%: over for 1 periods, '
                         'stabilization 3: not violated until 3',
                         metrics.judgement(95.0, None, 80.0, 90.0, 1, 3, 0))


class ContentionTest(testtools.TestCase):
    """Cores waiting for a CPU, averaged over the window as CPU is."""

    def update(self, state, now, cpu, waiting):
        return state.update(now, {'h1': metrics.HostSample(
            now, cpu, cpu_waiting=waiting)})['h1']

    def test_averaged_over_the_window(self):
        state = windows(window=3)
        self.update(state, 0, 100, 1.0)
        self.update(state, 60, 100, 3.0)
        self.assertEqual(2.0, self.update(state, 120, 100, 2.0).cpu_waiting)

    def test_a_sample_without_it_is_seen_by_cpu_alone(self):
        # The series went away: not an old average passed off as current.
        state = windows(window=3)
        self.update(state, 0, 100, 4.0)
        self.assertIsNone(self.update(state, 60, 100, None).cpu_waiting)
        self.assertEqual(4.0, self.update(state, 120, 100, 4.0).cpu_waiting)

    def test_kept_across_export_and_restore(self):
        original = windows(window=2)
        self.update(original, 0, 100, 1.5)
        self.update(original, 60, 90, None)
        exported = original.export()
        self.assertEqual([[0, 100, None, 1.5], [60, 90, None]],
                         exported['h1']['samples'])
        restored = windows(window=2)
        restored.restore(exported)
        self.assertEqual(1.5, self.update(restored, 120, 100, 1.5)
                         .cpu_waiting)

    def test_percent_of_the_hosts_cpus(self):
        self.assertEqual(25.0, metrics.contention_percent(2.0, 8))
        self.assertIsNone(metrics.contention_percent(None, 8))
        self.assertIsNone(metrics.contention_percent(2.0, 0))


class ExportRestoreTest(testtools.TestCase):

    def test_restored_windows_continue_where_they_stopped(self):
        original = windows(window=2)
        feed(original, [95, 95], host='h1')
        restored = windows(window=2)
        restored.restore(original.export())
        status = restored.update(120, {'h1': metrics.HostSample(120, 95)})
        self.assertEqual(3, status['h1'].counter)
        self.assertTrue(status['h1'].violated)
        self.assertEqual((95, 95), status['h1'].window)

    def test_restored_stale_samples_are_dropped(self):
        original = windows(window=2, max_age=60)
        feed(original, [95, 95], host='h1')
        restored = windows(window=2, max_age=60)
        restored.restore(original.export())
        status = restored.update(10000, {'h1': None})
        self.assertEqual(0, status['h1'].counter)
        self.assertIsNone(status['h1'].cpu_percent)

    def test_bad_entries_are_skipped(self):
        restored = windows()
        restored.restore({'h1': {'counter': 'x', 'samples': []},
                          'h2': {'samples': [[0, 'abc', None]]},
                          'h3': {'counter': 2, 'samples': [[0, 90, 10]]}})
        self.assertEqual(['h3'], list(restored.export()))
        self.assertEqual(2, restored.export()['h3']['counter'])

    def test_negative_counter_restores_as_zero(self):
        restored = windows()
        restored.restore({'h1': {'counter': -4, 'samples': [[0, 90, 10]]}})
        self.assertEqual({'h1': {'counter': 0, 'samples': [[0.0, 90.0,
                                                             10.0]]}},
                         restored.export())
        status = restored.update(60, {'h1': metrics.HostSample(60, 95.0)})
        self.assertEqual(1, status['h1'].counter)


class EwmaTest(testtools.TestCase):
    """The expected load's arithmetic, which decides when a destination is
    still counted as busy."""

    def test_zero_or_negative_halflife_means_no_memory(self):
        self.assertEqual(20.0, metrics.ewma(80.0, 20.0, 60.0, 0))
        self.assertEqual(20.0, metrics.ewma(80.0, 20.0, 60.0, -5))

    def test_old_mean_keeps_half_its_weight_per_halflife(self):
        self.assertEqual(62.5, metrics.ewma(100.0, 50.0, 1200.0, 600))
        self.assertEqual(50.0, metrics.ewma(100.0, 0.0, 1.0, 1))

    def test_no_time_passed_or_a_clock_going_back_changes_nothing(self):
        self.assertEqual(100.0, metrics.ewma(100.0, 0.0, 0.0, 600))
        self.assertEqual(100.0, metrics.ewma(100.0, 0.0, -30.0, 600))


class ExpectedLoadTest(testtools.TestCase):

    def test_off_by_default(self):
        status = feed(windows(), [90, 60])[-1]
        self.assertIsNone(status.cpu_expected)

    def test_new_level_is_half_reached_after_one_halflife(self):
        state = metrics.MetricsWindows(1, 1, 180, 80.0, 90.0, halflife=600)
        statuses = feed(state, [90] * 60 + [60] * 10)
        self.assertAlmostEqual(90.0, statuses[59].cpu_expected)
        # One 60 s sample at 60 after an hour at 90: still expected near 90.
        self.assertGreater(statuses[60].cpu_expected, 87.0)
        self.assertAlmostEqual(75.0, statuses[69].cpu_expected)

    def test_any_positive_halflife_keeps_an_expected_load(self):
        state = metrics.MetricsWindows(1, 1, 180, 80.0, 90.0, halflife=1)
        self.assertEqual(60.0, feed(state, [90, 60])[-1].cpu_expected)

    def test_expected_load_survives_a_restart_and_goes_with_staleness(self):
        state = metrics.MetricsWindows(1, 1, 120, 80.0, 90.0, halflife=600)
        feed(state, [90, 90])
        restored = metrics.MetricsWindows(1, 1, 120, 80.0, 90.0,
                                          halflife=600)
        restored.restore(state.export())
        status = restored.update(120, {'h1': metrics.HostSample(120, 30)})
        self.assertGreater(status['h1'].cpu_expected, 85.0)
        status = restored.update(1000, {'h1': None})
        self.assertIsNone(status['h1'].cpu_expected)
        status = restored.update(1060, {'h1': metrics.HostSample(1060, 30)})
        self.assertEqual(30.0, status['h1'].cpu_expected)


class LoadTrendsTest(testtools.TestCase):

    def test_first_sample_has_no_deviation(self):
        trends = metrics.LoadTrends(600, max_age=1800)
        trends.update(0, {'i1': 2.0})
        self.assertEqual((2.0, None), trends['i1'])
        self.assertNotIn('i2', trends)

    def test_the_inlined_update_is_ewma_and_ewm_variance(self):
        trends = metrics.LoadTrends(600, max_age=1800)
        mean, variance, previous = 1.0, 0.0, 0
        trends.update(0, {'i1': 1.0})
        for now, cores in ((60, 3.0), (180, 0.5), (200, 2.0)):
            trends.update(now, {'i1': cores})
            elapsed = now - previous
            variance = metrics.ewm_variance(mean, variance, cores, elapsed,
                                            600)
            mean = metrics.ewma(mean, cores, elapsed, 600)
            previous = now
        self.assertAlmostEqual(mean, trends['i1'][0])
        self.assertAlmostEqual(variance ** 0.5, trends['i1'][1])

    def test_a_swinging_instance_gets_a_deviation(self):
        trends = metrics.LoadTrends(600, max_age=1800)
        steady, swinging = [], []
        for step in range(30):
            now = 60 * step
            trends.update(now, {'steady': 1.0,
                                'swinging': 0.2 if step % 2 else 1.8})
        steady, swinging = trends['steady'], trends['swinging']
        self.assertEqual((1.0, 0.0), steady)
        self.assertAlmostEqual(1.0, swinging[0], delta=0.1)
        self.assertGreater(swinging[1], 0.5)

    def test_the_same_sample_twice_counts_once(self):
        trends = metrics.LoadTrends(600, max_age=1800)
        trends.update(0, {'i1': 1.0})
        trends.update(60, {'i1': 3.0})
        once = trends['i1']
        trends.update(60, {'i1': 3.0})
        self.assertEqual(once, trends['i1'])

    def test_an_instance_not_measured_for_long_is_forgotten(self):
        trends = metrics.LoadTrends(600, max_age=1800)
        trends.update(0, {'i1': 1.0})
        trends.update(1800, {'i2': 1.0})
        self.assertEqual((1.0, None), trends['i1'])
        trends.update(1801, {'i2': 1.0})
        self.assertNotIn('i1', trends)
        self.assertEqual(['i2'], list(trends))
        self.assertEqual(1, len(trends._loads))

    def test_long_gaps_fractions_of_seconds_and_several_instances(self):
        # A gap longer than the half-life, one under a second, and a
        # repeated sample beside a new one in the same update.
        trends = metrics.LoadTrends(1.0, max_age=5000.0)
        trends.update(0.25, {'a': 1.0, 'b': 2.0})
        trends.update(0.75, {'a': 3.0, 'b': 2.0})
        trends.update(0.75, {'a': 5.0, 'b': 4.0})
        trends.update(2.25, {'a': 1.0, 'b': 4.0})
        mean_a, var_a = 1.0, 0.0
        for elapsed, value in ((0.5, 3.0), (1.5, 1.0)):
            var_a = metrics.ewm_variance(mean_a, var_a, value, elapsed, 1.0)
            mean_a = metrics.ewma(mean_a, value, elapsed, 1.0)
        mean_b, var_b = 2.0, 0.0
        for elapsed, value in ((0.5, 2.0), (1.5, 4.0)):
            var_b = metrics.ewm_variance(mean_b, var_b, value, elapsed, 1.0)
            mean_b = metrics.ewma(mean_b, value, elapsed, 1.0)
        self.assertAlmostEqual(mean_a, trends['a'][0])
        self.assertAlmostEqual(var_a ** 0.5, trends['a'][1])
        self.assertAlmostEqual(mean_b, trends['b'][0])
        self.assertAlmostEqual(var_b ** 0.5, trends['b'][1])
        self.assertEqual(2, len(trends))
        # Forgotten just past max_age, on fractional clocks.
        trends.update(5002.5, {'b': 4.0})
        self.assertEqual(['b'], list(trends))
        self.assertEqual(1, len(trends))

    def test_an_older_sample_is_ignored(self):
        trends = metrics.LoadTrends(600, max_age=1800)
        trends.update(0, {'i1': 1.0})
        trends.update(60, {'i1': 3.0})
        kept = trends['i1']
        trends.update(30, {'i1': 9.0})
        self.assertEqual(kept, trends['i1'])

    def test_kept_three_half_lives_by_default(self):
        self.assertEqual(1800, metrics.LoadTrends(600).max_age)
        self.assertEqual(60, metrics.LoadTrends(600, max_age=60).max_age)

    def test_off_without_a_half_life(self):
        trends = metrics.LoadTrends(0, max_age=0)
        trends.update(0, {'i1': 1.0})
        self.assertEqual({}, dict(trends))


class RestartTest(testtools.TestCase):
    """A host being drained starts afresh: no counter, window or trend."""

    def test_restart_forgets_the_hosts_named_only(self):
        windows = metrics.MetricsWindows(window=3, stabilization=1,
                                         max_age=600, cpu_threshold=80,
                                         ram_threshold=90, halflife=600)
        for now, load in ((0, 90.0), (60, 10.0), (120, 90.0)):
            statuses = windows.update(now, {
                name: metrics.HostSample(now, load, None)
                for name in ('a', 'b')})
        self.assertGreater(statuses['a'].cpu_deviation, 0)
        windows.restart({'a', 'gone'})
        statuses = windows.update(180, {
            name: metrics.HostSample(180, 5.0, None) for name in ('a', 'b')})
        self.assertEqual((5.0, 0, (5.0,), 5.0),
                         (statuses['a'].cpu_percent, statuses['a'].counter,
                          statuses['a'].window, statuses['a'].cpu_expected))
        self.assertFalse(statuses['a'].cpu_deviation)
        self.assertEqual((90.0, 10.0, 90.0, 5.0)[1:],
                         statuses['b'].window)
