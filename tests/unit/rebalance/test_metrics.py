"""Sliding windows and stabilization counters, as in the seed design."""

import testtools

from nova_drs_scheduler.rebalance import metrics


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
        self.assertIsNone(state.status('gone'))

    def test_invalid_sizes_are_refused(self):
        self.assertRaises(ValueError, windows, window=0)
        self.assertRaises(ValueError, windows, stabilization=0)


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
