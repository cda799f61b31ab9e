"""``nova-drs maintenance``: waiting for a drain and showing where drains
stand, from the rows ``Store.maintenance`` returns (a fake store here)."""

import contextlib
import datetime
import io
import json
import types
from unittest import mock

import fixtures
import testtools
from oslo_db import exception as db_exc
from oslo_utils import fixture as utils_fixture

from nova_drs_scheduler.cli import cloud
from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import main as cli
from nova_drs_scheduler.cli import maintenance
from nova_drs_scheduler.cli import maintenance_plan
from nova_drs_scheduler.cli import output
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import drain_plan
from tests import snapshots as h

NOW = datetime.datetime(2026, 11, 1, 12, 0, 0)
INTERVAL = 60
CONF = types.SimpleNamespace(drs=types.SimpleNamespace(
    rebalance_interval=INTERVAL))
UUID_A = '3f0c2a1b-0000-4000-8000-000000000001'
UUID_B = '9a8b7c6d-0000-4000-8000-000000000002'


def ago(seconds):
    return NOW - datetime.timedelta(seconds=seconds)


class Flushed(io.StringIO):
    """stdout that keeps what had been written at each flush."""

    def __init__(self):
        super().__init__()
        self.flushed = []

    def flush(self):
        self.flushed.append(self.getvalue())
        super().flush()


def row(host='m1', state='draining', instances=3, completed=0, failed=0,
        in_flight=0, requested=600, reported=10, blockers=(), waiting=(),
        progress=True, reason='kernel update', disabled_by_drs=True):
    """A row shaped as ``Store.maintenance`` returns it."""
    return {
        # As read from the database: equal to the constants, not them.
        'host': host, 'reason': reason, 'state': ''.join(list(state)),
        'disabled_by_drs': disabled_by_drs, 'requested_at': ago(requested),
        'updated_at': ago(reported or 0),
        'reported_at': None if reported is None else ago(reported),
        'progress': {
            'instances': instances, 'planned': [],
            'waiting': list(waiting), 'blockers': list(blockers),
            'record': 'r1'} if progress else None,
        'moves': {'completed': completed, 'failed': failed,
                  'in_flight': in_flight}}


def blocker(uuid, name, reason):
    return {'instance': uuid, 'name': name, 'rule': 'blocked',
            'reason': reason}


class FakeStore:
    """``maintenance(host)`` answers from a script: one list of rows per
    call (the last one repeated), or raises it when an exception."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []
        self.closed = False

    def maintenance(self, host=None):
        self.asked.append(host)
        answer = self.answers.pop(0) if len(self.answers) > 1 \
            else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return [r for r in answer if host is None or r['host'] == host]

    def close(self):
        self.closed = True


class HostsStore(FakeStore):
    """``maintenance(host)`` answers from that host's own script of rows
    (the last one repeated)."""

    def __init__(self, **scripts):
        super().__init__()
        self.scripts = {host: list(rows) for host, rows in scripts.items()}

    def maintenance(self, host=None):
        self.asked.append(host)
        script = self.scripts[host]
        return [script.pop(0) if len(script) > 1 else script[0]]


class Clock:
    """A monotonic clock the fake sleep advances."""

    def __init__(self, start=1000.0):
        self.now = start
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class CLITestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(utils_fixture.TimeFixture(NOW))
        self.stdout = Flushed()
        stack = contextlib.ExitStack()
        stack.enter_context(contextlib.redirect_stdout(self.stdout))
        self.addCleanup(stack.close)

    def lines(self):
        return self.stdout.getvalue().splitlines()


class WaitTest(CLITestCase):

    def wait(self, store, timeout=3600.0, clock=None):
        clock = clock or Clock()
        return maintenance.wait(None, store, ['m1'], timeout, CONF,
                                clock=clock, sleep=clock.sleep)

    def test_drained_is_ok_and_each_change_is_printed_once(self):
        clock = Clock()
        store = FakeStore([row(instances=3)], [row(instances=3)],
                          [row(instances=2, completed=1)],
                          [row(state='drained', instances=0, completed=3)])
        self.assertEqual(errors.OK, self.wait(store, clock=clock))
        self.assertEqual([
            'm1: draining, 3 instance(s) left, 0 in flight, 0 completed, '
            '0 failed, time left -',
            'm1: draining, 2 instance(s) left, 0 in flight, 1 completed, '
            '0 failed, time left 20m00s',
            'm1: drained, 0 instance(s) left, 0 in flight, 3 completed, '
            '0 failed, time left 0s'], self.lines())
        self.assertEqual(['m1'] * 4, store.asked)
        self.assertEqual([maintenance.POLL_SECONDS] * 3, clock.sleeps)

    def test_each_line_is_flushed_as_printed(self):
        # ``--wait`` piped to a log shows each line when it happens.
        store = FakeStore([row()], [row(state='blocked', instances=1,
                                        blockers=[blocker(UUID_A, 'web',
                                                          'opted out')])])
        self.assertRaises(errors.CLIError, self.wait, store)
        lines = self.stdout.getvalue().splitlines(keepends=True)
        self.assertEqual(3, len(lines))
        for count in (1, 2, 3):
            self.assertIn(''.join(lines[:count]), self.stdout.flushed)

    def test_already_drained_returns_at_once(self):
        clock = Clock()
        store = FakeStore([row(state='drained', instances=0)])
        self.assertEqual(errors.OK, self.wait(store, timeout=0.5,
                                              clock=clock))
        self.assertEqual([], clock.sleeps)

    def test_blocked_lists_the_blockers_and_exits_6(self):
        store = FakeStore([row(state='blocked', instances=2, blockers=[
            blocker(UUID_A, 'web', 'opted out: instance metadata'),
            blocker(UUID_B, '', 'no-destination')])])
        error = self.assertRaises(errors.CLIError, self.wait, store)
        self.assertEqual(errors.BLOCKED, error.code)
        self.assertEqual(6, error.code)
        self.assertEqual(
            'the drain of m1 is blocked: 2 instance(s) cannot leave (listed '
            'above); act on them, then run this again', str(error))
        self.assertEqual([
            '  blocked by 3f0c2a1b web on m1: opted out: instance metadata',
            '  blocked by 9a8b7c6d on m1: no-destination'], self.lines()[1:])

    def test_blocked_even_past_the_deadline(self):
        clock = Clock()
        store = FakeStore([row()], [row(state='blocked', instances=1)])
        error = self.assertRaises(errors.CLIError, self.wait, store,
                                  timeout=1.0, clock=clock)
        self.assertEqual(errors.BLOCKED, error.code)
        self.assertEqual([1.0], clock.sleeps)

    def test_times_out_at_the_deadline_with_the_instances_left(self):
        clock = Clock()
        store = FakeStore([row(instances=4)])
        error = self.assertRaises(errors.CLIError, self.wait, store,
                                  timeout=12.0, clock=clock)
        self.assertEqual(errors.TIMED_OUT, error.code)
        self.assertEqual(7, error.code)
        self.assertEqual('m1 not drained within 12 s (4 instance(s) left); '
                         'the drain goes on', str(error))
        # Polls every 5 s, the last sleep only up to the deadline, which
        # ends the wait once reached.
        self.assertEqual([5.0, 5.0, 2.0], clock.sleeps)
        self.assertEqual(4, len(store.asked))
        self.assertEqual(1, len(self.lines()))

    def test_never_sleeps_a_negative_time(self):
        class Late(Clock):
            """Time passes between the deadline check and the sleep."""

            def __call__(self):
                self.now += 3.0
                return self.now

        clock = Late()
        store = FakeStore([row()])
        error = self.assertRaises(errors.CLIError, self.wait, store,
                                  timeout=7.0, clock=clock)
        self.assertEqual(errors.TIMED_OUT, error.code)
        # Deadline 1010: checked at 1006, slept up to 1010 - 1009; checked
        # at 1013 after 1 s, past it.
        self.assertEqual([1.0], clock.sleeps)
        clock = Late()
        self.assertRaises(errors.CLIError, self.wait, store, timeout=4.0,
                          clock=clock)
        # Deadline 1007: checked at 1006, 1009 when sleeping: none.
        self.assertEqual([0.0], clock.sleeps)

    def test_a_host_that_left_maintenance_is_a_usage_error(self):
        store = FakeStore([row()], [])
        error = self.assertRaises(errors.CLIError, self.wait, store)
        self.assertEqual(errors.USAGE, error.code)
        self.assertEqual('host m1 left maintenance while waiting',
                         str(error))

    def test_database_errors(self):
        error = self.assertRaises(errors.CLIError, self.wait, FakeStore(
            db_exc.DBError('gone')))
        self.assertEqual(errors.CLOUD, error.code)
        self.assertIn('cannot use the DRS database: gone', str(error))
        error = self.assertRaises(errors.CLIError, self.wait, FakeStore(
            db_store.NotFoundError('no such host')))
        self.assertEqual((errors.USAGE, 'no such host'),
                         (error.code, str(error)))


class WaitSeveralTest(CLITestCase):
    """``enter --wait`` with several hosts waits for all of them."""

    def wait(self, store, timeout=3600.0):
        clock = Clock()
        return maintenance.wait(None, store, ['m1', 'm2'], timeout, CONF,
                                clock=clock, sleep=clock.sleep)

    def heads(self):
        """Each line up to its first comma."""
        return [line.split(',')[0] for line in self.lines()]

    def test_until_every_host_is_drained(self):
        store = HostsStore(
            m1=[row('m1', state='drained', instances=0, completed=3)],
            m2=[row('m2', instances=2), row('m2', instances=1, completed=1),
                row('m2', state='drained', instances=0, completed=2)])
        self.assertEqual(errors.OK, self.wait(store))
        self.assertEqual(['m1: drained', 'm2: draining', 'm2: draining',
                          'm2: drained'], self.heads())
        self.assertEqual(['m1', 'm2'] * 3, store.asked)

    def test_a_blocked_host_waits_for_the_others_then_exits_6(self):
        store = HostsStore(
            m1=[row('m1', state='blocked', instances=1, blockers=[
                blocker(UUID_A, 'web', 'opted out')])],
            m2=[row('m2', instances=1),
                row('m2', state='drained', instances=0, completed=1)])
        error = self.assertRaises(errors.CLIError, self.wait, store)
        self.assertEqual(errors.BLOCKED, error.code)
        self.assertEqual(
            'the drain of m1 is blocked: 1 instance(s) cannot leave (listed '
            'above); act on them, then run this again', str(error))
        self.assertEqual(['m1: blocked', 'm2: draining', 'm2: drained',
                          '  blocked by 3f0c2a1b web on m1: opted out'],
                         self.heads())

    def test_times_out_naming_the_hosts_not_drained(self):
        store = HostsStore(m1=[row('m1', instances=4)],
                           m2=[row('m2', instances=3)])
        error = self.assertRaises(errors.CLIError, self.wait, store,
                                  timeout=12.0)
        self.assertEqual((errors.TIMED_OUT, 'm1, m2 not drained within 12 s '
                          '(7 instance(s) left); the drain goes on'),
                         (error.code, str(error)))
        store = HostsStore(m1=[row('m1', instances=4)],
                           m2=[row('m2', progress=False)])
        self.assertIn('(? instance(s) left)', str(self.assertRaises(
            errors.CLIError, self.wait, store, timeout=1.0)))

    def test_a_timeout_leaves_out_the_hosts_drained(self):
        store = HostsStore(m1=[row('m1', state='drained', instances=0,
                                   completed=3)],
                           m2=[row('m2', instances=3)])
        error = self.assertRaises(errors.CLIError, self.wait, store,
                                  timeout=12.0)
        self.assertEqual((errors.TIMED_OUT, 'm2 not drained within 12 s '
                          '(3 instance(s) left); the drain goes on'),
                         (error.code, str(error)))

    def test_a_timeout_names_a_blocked_host_as_not_drained(self):
        # m1 blocked, m2 still draining at the deadline: neither drained.
        store = HostsStore(m1=[row('m1', state='blocked', instances=1,
                                   blockers=[blocker(UUID_A, 'web',
                                                     'opted out')])],
                           m2=[row('m2', instances=3)])
        error = self.assertRaises(errors.CLIError, self.wait, store,
                                  timeout=12.0)
        self.assertEqual((errors.TIMED_OUT, 'm1, m2 not drained within 12 s '
                          '(4 instance(s) left); the drain goes on'),
                         (error.code, str(error)))


class SummaryTest(CLITestCase):

    def test_a_stored_row_as_status_shows_it(self):
        waiting = [blocker(UUID_B, 'db', 'migrating m1 -> a')]
        blockers = [blocker(UUID_A, 'web', 'opted out')]
        self.assertEqual({
            'host': 'm1', 'state': 'draining', 'queue_position': None,
            'reason': 'kernel update',
            'requested_at': ago(600), 'reported_at': ago(10),
            'instances': 3, 'moves': {'completed': 2, 'failed': 1,
                                      'in_flight': 1},
            # 600 s for 2 moves, 3 left.
            'time_left_seconds': 900.0,
            'waiting': waiting, 'blockers': blockers,
            'service_reenabled_on_exit': False, 'leader_silent': False},
            maintenance.summary(row(completed=2, failed=1, in_flight=1,
                                    waiting=waiting, blockers=blockers,
                                    disabled_by_drs=False), CONF))

    def test_before_the_first_report(self):
        summary = maintenance.summary(row(progress=False, reported=None,
                                          reason=None), CONF)
        self.assertEqual(
            (None, [], [], None, True, True, None),
            (summary['instances'], summary['waiting'], summary['blockers'],
             summary['time_left_seconds'], summary['leader_silent'],
             summary['service_reenabled_on_exit'], summary['reason']))

    def test_leader_silent_after_three_intervals_without_a_report(self):
        def silent(seconds):
            return maintenance.summary(row(reported=seconds),
                                       CONF)['leader_silent']

        self.assertEqual(3, maintenance.SILENT_PERIODS)
        self.assertFalse(silent(3 * INTERVAL))
        self.assertTrue(silent(3 * INTERVAL + 0.5))
        self.assertFalse(silent(0))


class ProgressLineTest(CLITestCase):

    def summary(self, **kwargs):
        return maintenance.summary(row(**kwargs), CONF)

    def test_counts_and_time_left(self):
        self.assertEqual(
            'm1: blocked, 1 instance(s) left, 2 in flight, 3 completed, '
            '4 failed, time left 3m20s',
            maintenance._progress_line(self.summary(
                state='blocked', instances=1, in_flight=2, completed=3,
                failed=4)))

    def test_unknown_count_and_a_silent_leader(self):
        self.assertEqual(
            'm1: draining, ? instance(s) left, 0 in flight, 0 completed, '
            '0 failed, time left - (no report from a leading scheduler '
            'yet)', maintenance._progress_line(self.summary(
                progress=False, reported=None)))

    def test_durations(self):
        self.assertEqual(
            ['-', '0s', '5s', '59s', '1m00s', '1m00s', '2m05s', '60m00s'],
            [output.duration(s)
             for s in (None, 0, 5, 59.4, 59.6, 60, 125, 3600)])


class StatusTest(CLITestCase):

    def status(self, store, host=None, json_output=False):
        self.useFixture(fixtures.MockPatchObject(
            db, 'open_store', return_value=store))
        args = types.SimpleNamespace(host=host, json=json_output)
        return maintenance.status_(args, CONF)

    def test_table_of_hosts_and_blockers(self):
        store = FakeStore([
            # Times to the microsecond, shown to the second.
            row('m1', 'blocked', instances=2, completed=1, failed=2,
                in_flight=0, requested=600.25, reported=600.5, blockers=[
                    blocker(UUID_A, 'web', 'opted out')]),
            row('m2', 'drained', instances=0, completed=5, reported=None,
                reason=None)])
        self.assertEqual(errors.OK, self.status(store))
        self.assertTrue(store.closed)
        self.assertEqual([None], store.asked)
        lines = self.lines()
        self.assertEqual('Hosts in maintenance', lines[0])
        self.assertEqual(
            ['host', 'state', 'queue', 'left', 'in', 'flight', 'completed',
             'failed', 'time', 'left', 'since', 'last', 'report', 'reason'],
            lines[1].split())
        self.assertEqual(
            ['m1', 'blocked', '-', '2', '0', '1', '2', '20m00s',
             '2026-11-01',
             '11:49:59', '2026-11-01', '11:49:59', '(silent)', 'kernel',
             'update'], lines[3].split())
        self.assertEqual(
            ['m2', 'drained', '-', '0', '0', '5', '0', '0s', '2026-11-01',
             '11:50:00', 'none', 'yet'], lines[4].split())
        blocking = lines.index('Blocking instances')
        self.assertEqual(['m1', '3f0c2a1b', 'web', 'opted', 'out'],
                         lines[blocking + 3].split())

    def test_a_report_within_the_intervals_is_not_silent(self):
        store = FakeStore([row('m1', instances=None, reported=30)])
        self.assertEqual(errors.OK, self.status(store, 'm1'))
        self.assertEqual(['m1'], store.asked)
        hosts = self.lines()[3].split()
        self.assertEqual(['m1', 'draining', '-', '?'], hosts[:4])
        self.assertEqual(['2026-11-01', '11:59:30', 'kernel', 'update'],
                         hosts[-4:])
        self.assertIn('(none)', self.lines())

    def test_json(self):
        store = FakeStore([row('m1', instances=1, completed=1)])
        self.assertEqual(errors.OK, self.status(store, json_output=True))
        [found] = json.loads(self.stdout.getvalue())
        self.assertEqual(('m1', 1, 600.0, False),
                         (found['host'], found['instances'],
                          found['time_left_seconds'],
                          found['leader_silent']))

    def test_a_host_not_in_maintenance(self):
        store = FakeStore([row('m1')])
        error = self.assertRaises(errors.CLIError, self.status, store, 'm2')
        self.assertEqual((errors.USAGE, 'host m2 is not in maintenance'),
                         (error.code, str(error)))
        self.assertTrue(store.closed)

    def test_no_host_in_maintenance(self):
        self.assertEqual(errors.OK, self.status(FakeStore([])))
        self.assertEqual(['Hosts in maintenance', '(none)', '',
                          'Blocking instances', '(none)', ''], self.lines())

    def test_store_closed_after_a_database_error(self):
        store = FakeStore(db_exc.DBError('gone'))
        error = self.assertRaises(errors.CLIError, self.status, store)
        self.assertEqual(errors.CLOUD, error.code)
        self.assertTrue(store.closed)


class ParserTest(testtools.TestCase):

    def parse(self, *argv):
        return cli.build_parser().parse_args(['maintenance', *argv])

    def refused(self, *argv):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            error = self.assertRaises(SystemExit, self.parse, *argv)
        self.assertEqual(errors.USAGE, error.code)
        return stderr.getvalue()

    def test_actions_and_their_handlers(self):
        args = self.parse('enter', 'h1')
        self.assertEqual(
            ('maintenance', maintenance.enter_, ['h1'], None, False, 3600.0),
            (args.command, args.handler, args.hosts, args.reason, args.wait,
             args.timeout))
        args = self.parse('enter', 'h1', 'h2', '--reason', 'bios', '--wait',
                          '--timeout', '0.5')
        self.assertEqual((['h1', 'h2'], 'bios', True, 0.5),
                         (args.hosts, args.reason, args.wait, args.timeout))
        args = self.parse('plan', 'h1', 'h2', '--json')
        self.assertEqual((maintenance_plan.plan_, ['h1', 'h2'], True),
                         (args.handler, args.hosts, args.json))
        self.assertEqual((maintenance.exit_, 'h1'), (
            self.parse('exit', 'h1').handler, self.parse('exit', 'h1').host))
        args = self.parse('status')
        self.assertEqual((maintenance.status_, None), (args.handler,
                                                       args.host))
        self.assertEqual('h1', self.parse('status', 'h1').host)

    def test_one_at_a_time(self):
        self.assertFalse(self.parse('enter', 'h1').one_at_a_time)
        args = self.parse('enter', 'h1', 'h2', '--one-at-a-time', '--wait')
        self.assertEqual((['h1', 'h2'], True, True),
                         (args.hosts, args.one_at_a_time, args.wait))

    def test_an_action_is_required(self):
        self.assertIn('required', self.refused())

    def test_plan_and_enter_need_a_host(self):
        for action in ('plan', 'enter'):
            self.assertIn('the following arguments are required: HOST',
                          self.refused(action))

    def test_timeout_above_zero(self):
        self.assertIn('--timeout', self.refused('enter', 'h1', '--timeout',
                                                '0'))

    def test_json_at_each_level_nova_conf_after_the_action(self):
        self.assertTrue(self.parse('--json', 'status').json)
        self.assertTrue(self.parse('status', '--json').json)
        self.assertEqual(['/etc/x.conf'], self.parse(
            'status', '--config-file', '/etc/x.conf').config_file)
        self.refused('--config-file', '/etc/x.conf', 'status')


class RequestsTestCase(CLITestCase):
    """``rebalance.maintenance`` replaced (tested in the functional
    tests), the store a fake."""

    def setUp(self):
        super().setUp()
        from nova_drs_scheduler.rebalance import maintenance as requests
        self.requests = requests
        self.store = FakeStore([row(state='drained', instances=0)])
        self.useFixture(fixtures.MockPatchObject(
            db, 'open_store', return_value=self.store))

    def run_action(self, handler, action, result=None, error=None,
                   **options):
        self.useFixture(fixtures.MockPatchObject(
            self.requests, action, return_value=result, side_effect=error))
        args = types.SimpleNamespace(**{'json': False, 'host': 'm1',
                                        **options})
        try:
            return handler(args, CONF)
        finally:
            self.assertTrue(self.store.closed)


class EnterExitTest(RequestsTestCase):
    """``enter`` and ``exit`` with Nova's side replaced."""

    def enter(self, hosts=('m1',), **options):
        def entered(store, host, reason):
            return {'host': host, 'state': 'draining',
                    'service_disabled_reason': f'nova-drs: maintenance: '
                                               f'{reason}'}
        return self.run_action(maintenance.enter_, 'enter', error=entered,
                               hosts=list(hosts), reason='bios', **options)

    def test_enter_says_where_to_follow_it(self):
        self.assertEqual(errors.OK, self.enter(wait=False, timeout=1.0))
        self.assertEqual(
            ['m1', 'draining', 'disabled', '(nova-drs:', 'maintenance:',
             'bios)'], self.lines()[2].split())
        self.assertEqual('The leading scheduler drains it from its next '
                         'period: nova-drs maintenance status m1',
                         self.lines()[-1])
        self.requests.enter.assert_called_once_with(self.store, 'm1',
                                                    'bios')

    def test_enter_in_json_prints_the_row_only(self):
        self.assertEqual(errors.OK, self.enter(wait=False, timeout=1.0,
                                               json=True))
        self.assertEqual('draining',
                         json.loads(self.stdout.getvalue())['state'])

    def test_enter_and_wait(self):
        self.assertEqual(errors.OK, self.enter(wait=True, timeout=1.0))
        self.assertEqual(['m1'], self.store.asked)
        self.assertEqual(['m1: drained, 0 instance(s) left, 0 in flight, 0 '
                          'completed, 0 failed, time left -'], self.lines())

    def test_enter_several_hosts_in_order(self):
        self.assertEqual(errors.OK, self.enter(hosts=('m1', 'm2'),
                                               wait=False, timeout=1.0))
        self.assertEqual([('m1', 'draining'), ('m2', 'draining')],
                         [tuple(line.split()[:2])
                          for line in self.lines()[2:4]])
        self.assertEqual('The leading scheduler drains them from its next '
                         'period: nova-drs maintenance status',
                         self.lines()[-1])
        self.assertEqual([mock.call(self.store, 'm1', 'bios'),
                          mock.call(self.store, 'm2', 'bios')],
                         self.requests.enter.call_args_list)

    def test_enter_more_hosts_than_small_ints(self):
        # 257 hosts: counts past the integers CPython caches, compared by
        # value all the same.
        hosts = [f'm{n:03}' for n in range(257)]
        self.assertEqual(errors.OK, self.enter(hosts=hosts, wait=False,
                                               timeout=1.0))
        self.assertEqual('The leading scheduler drains them from its next '
                         'period: nova-drs maintenance status',
                         self.lines()[-1])

    def test_enter_and_wait_for_more_hosts_than_small_ints(self):
        hosts = [f'm{n:03}' for n in range(257)]
        self.store.answers = [[row(host, state='drained', instances=0)
                               for host in hosts]]
        self.assertEqual(errors.OK, self.enter(hosts=hosts, wait=True,
                                               timeout=1.0))
        self.assertEqual(hosts, self.store.asked)
        # Every host started: no "Waiting for ... only" line.
        self.assertEqual([f'{host}: drained' for host in hosts],
                         [line.split(',')[0] for line in self.lines()])

    def test_enter_several_in_json_is_a_list(self):
        self.assertEqual(errors.OK, self.enter(hosts=('m1', 'm2'),
                                               wait=False, timeout=1.0,
                                               json=True))
        self.assertEqual(['m1', 'm2'], [
            found['host'] for found in json.loads(self.stdout.getvalue())])

    def test_the_first_refusal_stops_showing_the_hosts_entered(self):
        def enter(store, host, reason):
            if host == 'm2':
                raise self.requests.UnknownHostError('no host m2')
            return {'host': host, 'state': 'draining',
                    'service_disabled_reason': 'nova-drs: maintenance'}
        error = self.assertRaises(
            errors.CLIError, self.run_action, maintenance.enter_, 'enter',
            error=enter, hosts=['m1', 'm2', 'm3'], reason=None, wait=True,
            timeout=1.0)
        self.assertEqual((errors.USAGE, 'no host m2'),
                         (error.code, str(error)))
        self.assertEqual(['m1', 'draining'], self.lines()[2].split()[:2])
        self.assertEqual('', self.lines()[3])
        self.assertNotIn('leading scheduler', self.stdout.getvalue())
        self.assertEqual(['m1', 'm2'], [
            call.args[1] for call in self.requests.enter.call_args_list])
        self.assertEqual([], self.store.asked)

    def test_enter_and_wait_for_several(self):
        self.store.answers = [[row('m1', state='drained', instances=0),
                               row('m2', state='drained', instances=0)]]
        self.assertEqual(errors.OK, self.enter(hosts=('m1', 'm2'),
                                               wait=True, timeout=1.0))
        self.assertEqual(['m1', 'm2'], self.store.asked)
        self.assertEqual(['m1: drained', 'm2: drained'],
                         [line.split(',')[0] for line in self.lines()])

    def test_refusals(self):
        from nova import exception
        for error, code, text in (
                (self.requests.UnknownHostError('no host m1'),
                 errors.USAGE, 'no host m1'),
                (db_store.NotFoundError('m1 not in maintenance'),
                 errors.USAGE, 'm1 not in maintenance'),
                (exception.ServiceNotFound(service_id='m1'), errors.CLOUD,
                 'Nova refused the service update: Service m1 could not '
                 'be found.')):
            found = self.assertRaises(
                errors.CLIError, self.run_action, maintenance.exit_,
                'exit', error=error)
            self.assertEqual((code, text), (found.code, str(found)))

    def test_exit_says_what_became_of_the_service(self):
        for enabled, disabled, text in (
                (True, False, 'enabled again'),
                (False, True, 'left disabled (not disabled by nova-drs)'),
                (False, False, 'enabled')):
            self.stdout.seek(0)
            self.stdout.truncate()
            self.assertEqual(errors.OK, self.run_action(
                maintenance.exit_, 'exit',
                {'host': 'm1', 'enabled': enabled,
                 'service_disabled': disabled}))
            self.assertEqual(['m1', 'ended'] + text.split(),
                             self.lines()[2].split())


class QueueTest(RequestsTestCase):
    """``enter --one-at-a-time``, ``exit`` starting the queue's first host
    and ``status`` of a queue (``rebalance.maintenance`` replaced)."""

    def queue(self, hosts=('m1', 'm2', 'm3'), **options):
        """m1 starts, the others queue behind it."""
        def entered(store, host, reason, one_at_a_time=False):
            # States as read from the database: equal to the constants,
            # not them.
            if host == 'm1':
                return {'host': host, 'state': ''.join(list('draining')),
                        'queue_position': None,
                        'service_disabled_reason': 'nova-drs: maintenance'}
            return {'host': host, 'state': ''.join(list('queued')),
                    'queue_position': hosts.index(host),
                    'service_disabled_reason': None}
        options = {'wait': False, 'timeout': 1.0, **options}
        return self.run_action(maintenance.enter_, 'enter', error=entered,
                               hosts=list(hosts), reason='bios',
                               one_at_a_time=True, **options)

    def test_enter_shows_the_queue_and_what_starts_it(self):
        self.assertEqual(errors.OK, self.queue())
        self.assertEqual(
            [['m1', 'draining', 'disabled', '(nova-drs:', 'maintenance)'],
             ['m2', 'queued', 'enabled', 'until', 'its', 'turn', '(queue',
              'position', '1)'],
             ['m3', 'queued', 'enabled', 'until', 'its', 'turn', '(queue',
              'position', '2)']],
            [line.split() for line in self.lines()[2:5]])
        self.assertEqual(
            'The leading scheduler drains m1 from its next period; the '
            'queued hosts wait, in service, each until "nova-drs '
            'maintenance exit" of the host draining before it: nova-drs '
            'maintenance status', self.lines()[-1])
        self.assertEqual(
            [mock.call(self.store, host, 'bios', True)
             for host in ('m1', 'm2', 'm3')],
            self.requests.enter.call_args_list)

    def test_every_host_queued(self):
        self.assertEqual(errors.OK, self.queue(hosts=('m0', 'm2')))
        self.assertTrue(self.lines()[-1].startswith(
            'the queued hosts wait, in service'))

    def test_enter_in_json(self):
        self.assertEqual(errors.OK, self.queue(json=True))
        self.assertEqual(
            [('m1', 'draining', None), ('m2', 'queued', 1),
             ('m3', 'queued', 2)],
            [(row['host'], row['state'], row['queue_position'])
             for row in json.loads(self.stdout.getvalue())])

    def test_wait_is_for_the_hosts_started_only(self):
        self.store.answers = [[row('m1', state='drained', instances=0)]]
        self.assertEqual(errors.OK, self.queue(wait=True))
        self.assertEqual(['m1'], self.store.asked)
        self.assertEqual(
            'Waiting for m1 only; the queued hosts start one after the '
            'other as each exits.', self.lines()[0])
        self.assertTrue(self.lines()[1].startswith('m1: drained'))
        # Flushed as printed, before the first read of the drain.
        self.assertIn(self.lines()[0] + '\n', self.stdout.flushed)
        # Nothing started: nothing to wait for.
        self.stdout.seek(0)
        self.stdout.truncate()
        self.store.asked.clear()
        self.assertEqual(errors.OK, self.queue(hosts=('m0', 'm2'),
                                               wait=True))
        self.assertEqual([], self.store.asked)
        self.assertIn('the queued hosts wait', self.lines()[-1])

    def exit_with(self, following, json_output=False):
        return self.run_action(
            maintenance.exit_, 'exit',
            {'host': 'm1', 'state': 'drained', 'enabled': True,
             'service_disabled': False, 'next': following},
            json=json_output)

    def test_exit_says_which_host_started(self):
        following = {'host': 'm2', 'started': True, 'error': None,
                     'service_disabled_reason': 'nova-drs: maintenance: '
                                                'bios'}
        self.assertEqual(errors.OK, self.exit_with(following))
        self.assertEqual(
            [['m1', 'ended', 'enabled', 'again'],
             ['m2', 'started', '(first', 'in', 'the', 'queue)', 'disabled',
              '(nova-drs:', 'maintenance:', 'bios)']],
            [line.split() for line in self.lines()[2:4]])
        self.stdout.seek(0)
        self.stdout.truncate()
        self.assertEqual(errors.OK, self.exit_with(following, True))
        self.assertEqual(following,
                         json.loads(self.stdout.getvalue())['next'])

    def test_exit_when_nova_refuses_the_next_host_exits_4(self):
        error = self.assertRaises(
            errors.CLIError, self.exit_with,
            {'host': 'm2', 'started': False, 'error': 'Service m2 could '
             'not be found.', 'service_disabled_reason': None})
        self.assertEqual(errors.CLOUD, error.code)
        self.assertEqual(4, error.code)
        self.assertEqual(
            'm1 left maintenance, but the drain of m2, first in the queue, '
            'did not start: Service m2 could not be found.; it stays '
            'queued: run "nova-drs maintenance enter m2" to start it',
            str(error))
        self.assertEqual(
            [['m1', 'ended', 'enabled', 'again'],
             ['m2', 'still', 'queued', '(first)', 'enabled', '(Nova',
              'refused', 'to', 'disable', 'it)']],
            [line.split() for line in self.lines()[2:4]])

    def test_exit_with_no_queue_shows_one_host(self):
        self.assertEqual(errors.OK, self.exit_with(None))
        self.assertEqual(['m1', 'ended', 'enabled', 'again'],
                         self.lines()[2].split())
        self.assertEqual('', self.lines()[3])


class QueueStatusTest(CLITestCase):

    def queued(self, host, position):
        return dict(row(host, 'queued', progress=False, reported=None,
                        disabled_by_drs=False), queue_position=position)

    def test_the_queue_in_its_order_after_the_hosts_draining(self):
        store = FakeStore([self.queued('a2', 2), row('m2'),
                           self.queued('z1', 1), row('m1', 'blocked')])
        self.useFixture(fixtures.MockPatchObject(
            db, 'open_store', return_value=store))
        args = types.SimpleNamespace(host=None, json=False)
        self.assertEqual(errors.OK, maintenance.status_(args, CONF))
        hosts = [line.split() for line in self.lines()[3:7]]
        self.assertEqual([('m2', 'draining', '-'), ('m1', 'blocked', '-'),
                          ('z1', 'queued', '1'), ('a2', 'queued', '2')],
                         [tuple(line[:3]) for line in hosts])
        # Queued: no report expected, none missed.
        self.assertEqual(['11:50:00', '-', 'kernel', 'update'],
                         hosts[2][-4:])
        self.stdout.seek(0)
        self.stdout.truncate()
        args.json = True
        maintenance.status_(args, CONF)
        found = {r['host']: r for r in json.loads(self.stdout.getvalue())}
        self.assertEqual((1, 'queued', False, False),
                         (found['z1']['queue_position'],
                          found['z1']['state'], found['z1']['leader_silent'],
                          found['z1']['service_reenabled_on_exit']))
        self.assertIsNone(found['m1']['queue_position'])


class PlanTest(CLITestCase):
    """``maintenance plan``: the pure assessment of a hand-made snapshot
    as the command shows it (the live snapshot: the functional tests)."""

    HOSTS = (h.host('m1', 40.0, ram=50.0, draining=True),
             h.host('m2', 30.0, draining=True), h.host('a', 10.0),
             h.host('b', 20.0))

    def plan(self, instances, hosts=('m1', 'm2'), **options):
        found = drain_plan.assess(h.snapshot(self.HOSTS, instances),
                                  h.allow_all, list(hosts))
        asked = self.useFixture(fixtures.MockPatchObject(
            cloud, 'maintenance_plan', return_value=found)).mock
        args = types.SimpleNamespace(**{'json': False, 'hosts': list(hosts),
                                        **options})
        code = maintenance_plan.plan_(args, CONF)
        asked.assert_called_once_with(CONF, list(hosts))
        return code

    def test_every_host_at_once_exits_0(self):
        code = self.plan([h.instance(UUID_A, 'm1', 1.0, name='web'),
                          h.instance(UUID_B, 'm2', 1.0)], json=True)
        self.assertEqual(errors.OK, code)
        document = json.loads(self.stdout.getvalue())
        self.assertEqual({'hosts', 'at_once', 'all_at_once', 'pace'},
                         set(document))
        self.assertTrue(document['all_at_once'])
        m1 = document['hosts'][0]
        self.assertEqual({'host', 'instances', 'can_drain', 'drain_seconds',
                          'moves', 'waiting', 'blockers', 'over'}, set(m1))
        self.assertEqual(('m1', 1, True, [], [], []), (
            m1['host'], m1['instances'], m1['can_drain'], m1['waiting'],
            m1['blockers'], m1['over']))
        self.assertGreater(m1['drain_seconds'], 0)
        [move] = m1['moves']
        self.assertEqual(
            {'instance': UUID_A, 'name': 'web', 'source': 'm1',
             'destination': 'a', 'migration': 'live', 'memory_mb': 1000,
             'cpu_cores': 1.0, 'destination_cpu': 20.0,
             'destination_ram': None},
            {key: value for key, value in move.items() if key != 'reason'})
        self.assertIn('maintenance: host m1 is draining', move['reason'])
        at_once = document['at_once']
        self.assertEqual((['m1', 'm2'], [], 2), (
            at_once['hosts'], at_once['left_out'], len(at_once['moves'])))
        self.assertEqual({'drain_max_concurrent_migrations_per_host': 1,
                          'destination_concurrency': 1,
                          'migration_bandwidth': 10000.0,
                          'migration_dirty_rate': 64.0}, document['pace'])

    def test_a_host_that_cannot_drain_exits_6_and_is_named(self):
        code = self.plan([
            h.instance(UUID_A, 'm1', 1.0, name='web'),
            h.instance(UUID_B, 'm1', 1.0, name='db', blocked='opted out'),
            h.instance('i3', 'm2', 1.0)])
        self.assertEqual(errors.BLOCKED, code)
        text = self.stdout.getvalue()
        for title in ('Hosts, each drained alone',
                      'Moves, each host drained alone',
                      'Instances that stay, each host drained alone',
                      'Hosts pushed over a threshold, each host drained '
                      'alone', 'At once'):
            self.assertIn(f'{title}\n', text)
        self.assertIn('9a8b7c6d db  blocks     opted out', text)
        self.assertIn('3f0c2a1b web  a     live', text)
        self.assertRegex(text, r'm1 +no +- +alone: 1 instance\(s\) would '
                               r'block')
        self.assertEqual(
            'm2 can drain at once in about 1s (1 migration(s) at a time off '
            'each host, 1 into each destination, one 10000 Mbit/s link per '
            'host).', self.lines()[-1])

    def test_a_host_pushed_over_is_named(self):
        code = self.plan([h.instance(UUID_A, 'm2', 1.0),
                          h.instance(UUID_B, 'm2', 7.0)], hosts=('m2',))
        self.assertEqual(errors.BLOCKED, code)
        self.assertRegex(self.stdout.getvalue(),
                         r'm2 +a +90 +80 +- +90')
        self.assertEqual('None of the hosts can drain: see above.',
                         self.lines()[-1])
