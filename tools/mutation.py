"""Mutation testing of the core modules with cosmic-ray (tox -e mutation).

Each module is mutated on its own and, after every mutation, only the unit
tests that exercise it are run (the fastest subset that still pins it).
The work happens in a copy of the source tree, so the work tree is never
touched and can be edited during a run.  Session databases are kept in
``.mutation/`` for ``cr-report``.

Importing Nova takes seconds, longer than most test subsets run, so the
test command cosmic-ray runs is a small client of a fork server started
here: the server imports Nova and the test framework once (never a module
of this package), and forks a child per mutant that imports the mutated
module and its tests fresh from disk.

Mutants that cannot change any behaviour (equivalent mutants) are listed in
doc/mutation-testing.md, section "Equivalent mutants", one table row each::

    | `filters/pool.py` | `original line` | `mutated line` | reason |

(a ``|`` inside a cell is written ``\\|``, as GitHub's tables want).

They are matched by module and by the original and mutated source line, so
the list survives edits elsewhere in the module; a listed mutant that no
longer occurs is reported as stale.

Usage: python tools/mutation.py [MODULE ...]   (e.g. filters/pool.py)
"""

import argparse
import dataclasses
import json
import os
import pathlib
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = 'nova_drs_scheduler'
DOC = ROOT / 'doc' / 'mutation-testing.md'
SESSIONS = ROOT / '.mutation'
COSMIC_RAY = os.path.join(os.path.dirname(sys.executable), 'cosmic-ray')

_FILTERS = 'tests.unit.filters.'
_PLANNING = 'tests.unit.planning.'
_LIVE = 'tests.unit.live.'
_HOST_MANAGER = 'tests.unit.host_manager.'
_SIMULATE = 'tests.unit.simulate.'
#: Most sensitive first: a killed mutant stops at its first failure.
_HOST_CACHE_TESTS = [_HOST_MANAGER + name for name in (
    'test_refresh', 'test_requests', 'test_isolation', 'test_reuse',
    'test_background', 'test_owner_trait', 'test_flags')]
_PLANNER_TESTS = [_PLANNING + name for name in (
    'test_balanced', 'test_inside_margin', 'test_rails', 'test_no_return',
    'test_seed',
    'test_cost', 'test_policies', 'test_deviation', 'test_leveling',
    'test_drain', 'test_benefit', 'test_capacity', 'test_starved',
    'test_working', 'test_cost_benefit')]

#: Module (relative to the package) -> the unit tests that pin it.
MODULES = {
    'filters/__init__.py': [_FILTERS + 'test_registry'],
    'filters/aggregate.py': [_FILTERS + 'test_capacity'],
    'filters/capacity.py': [_FILTERS + 'test_capacity'],
    'filters/core.py': [_FILTERS + 'test_capacity.CoreFilterTest'],
    'filters/disk.py': [_FILTERS + 'test_capacity.DiskFilterTest'],
    'filters/ram.py': [_FILTERS + 'test_capacity.RamFilterTest'],
    'filters/pool.py': [_FILTERS + 'test_pool.DRSPoolFilterTest'],
    'filters/utilization.py': [_FILTERS + 'test_utilization'],
    'weighers/__init__.py': ['tests.unit.weighers.test_registry'],
    'weighers/utilization.py': ['tests.unit.weighers.test_utilization'],
    'planning/metrics.py': [_PLANNING + 'test_metrics',
                             _PLANNING + 'test_deviation',
                             _PLANNING + 'test_leveling'],
    'planning/planner.py': _PLANNER_TESTS,
    'planning/working.py': _PLANNER_TESTS,
    'planning/search.py': _PLANNER_TESTS,
    'planning/moves.py': _PLANNER_TESTS,
    'planning/cost_benefit.py': _PLANNER_TESTS,
    'planning/reasons.py': _PLANNER_TESTS,
    'planning/goals/drain.py': _PLANNER_TESTS + [
        _PLANNING + 'test_power.PlannerDrainTest'],
    'planning/goals/relieve.py': _PLANNER_TESTS,
    'planning/goals/level.py': _PLANNER_TESTS,
    'planning/goals/consolidate.py': [
        _PLANNING + 'test_power.ConsolidateGoalTest'],
    'planning/capacity.py': [_PLANNING + 'test_capacity'],
    'planning/drain_plan.py': [_PLANNING + 'test_drain_plan'],
    'planning/drain_time.py': [_PLANNING + 'test_drain_time'],
    'planning/policies/__init__.py': _PLANNER_TESTS,
    'planning/policies/base.py': _PLANNER_TESTS,
    'planning/policies/balanced.py': _PLANNER_TESTS,
    'planning/policies/seed.py': _PLANNER_TESTS,
    'rebalance/candidates.py': ['tests.unit.live.test_candidates'],
    'rebalance/sources/nova.py': ['tests.unit.live.test_nova_source'],
    'rebalance/live.py': ['tests.unit.live.test_live',
                          'tests.unit.live.test_read_instances',
                          'tests.unit.live.test_drain_blocked'],
    'from_conf.py': [_PLANNING + 'test_conf',
                     'tests.unit.test_aggressiveness'],
    'rebalance/aggregate_settings.py': [
        'tests.unit.live.test_aggregate_settings'],
    'rebalance/executor.py': ['tests.unit.live.test_executor',
                              _PLANNING + 'test_no_return'],
    'planning/drain.py': [_PLANNING + 'test_drain_state'],
    # The hypothesis properties are left out: too slow per mutant; and
    # conf.validate, which needs the package's entry points installed.
    'planning/power.py': [_PLANNING + 'test_power.' + name for name in (
        'StandbyTest', 'WakeTest', 'CancelTest', 'ObserveTest', 'CountTest',
        'CeilingTest', 'NeededNowTest', 'PlanTest',
        'ConfigTest.test_defaults', 'ConfigTest.test_follows_the_options')],
    'planning/forecast.py': [_PLANNING + 'test_forecast'],
    'planning/standby_placement.py': [
        _PLANNING + 'test_standby_placement',
        _PLANNING + 'test_power.StandbyTest',
        _PLANNING + 'test_power.CeilingTest'],
    'planning/daily_shape.py': [_PLANNING + 'test_daily_shape.' + name
                                for name in ('DailyShapeTest',
                                             'RestoreTest', 'OutlookTest')],
    'planning/outlook.py': [_PLANNING + 'test_daily_shape.OutlookTest',
                            _PLANNING + 'test_power.WakeTest'],
    'db/shape_rows.py': ['tests.unit.db.test_shape_rows'],
    'rebalance/daily_shapes.py': ['tests.unit.live.test_standby'],
    'planning/benefit.py': [_PLANNING + 'test_benefit',
                            _PLANNING + 'test_starved'],
    'planning/relief.py': [_PLANNING + 'test_relief',
                            _LIVE + 'test_relief_check'],
    'planning/recent_moves.py': [
        _PLANNING + 'test_recent_moves', _PLANNING + 'test_no_return',
        'tests.unit.live.test_executor.MigrationStateTest'],
    'rebalance/recommendations.py': [_LIVE + 'test_recommendations'],
    'rebalance/standby.py': ['tests.unit.live.test_standby'],
    'rebalance/compute_service.py': ['tests.unit.live.test_compute_service'],
    'db/power_rows.py': ['tests.unit.db.test_power_rows'],
    'planning/model.py': [_PLANNING + 'test_model',
                           _PLANNING + 'test_conf'] + _PLANNER_TESTS,
    'rebalance/record.py': ['tests.unit.live.test_record',
                            _LIVE + 'test_prometheus_contention',
                            'tests.unit.live.test_deadline.NotRelievedTest'],
    'rebalance/rebalancer.py': [
        _LIVE + 'test_rebalancer',
        _LIVE + 'test_relief_check.LeadChecksReliefTest',
        'tests.unit.test_pacing.PeriodBudgetTest'],
    'rebalance/snapshot_reader.py': [
        _LIVE + 'test_snapshot_reader',
        _LIVE + 'test_deadline.NotRelievedTest',
        _LIVE + 'test_drain_blocked.HeldForThePeriodTest'],
    'rebalance/period_plan.py': [_LIVE + 'test_period_plan',
                                 _LIVE + 'test_rebalancer'],
    'rebalance/starting.py': [_LIVE + 'test_rebalancer',
                              _LIVE + 'test_starting'],
    'rebalance/maintenance.py': [_LIVE + 'test_maintenance'],
    'rebalance/outcomes.py': [_LIVE + 'test_outcomes',
                              _LIVE + 'test_rebalancer'],
    'rebalance/relief_check.py': [_LIVE + 'test_relief_check'],
    'cli/maintenance.py': ['tests.unit.test_cli_maintenance'],
    'pacing.py': ['tests.unit.test_pacing',
                  _HOST_MANAGER + 'test_background.GivingWayTest'],
    'deadline.py': ['tests.unit.live.test_deadline',
                    'tests.unit.live.test_nova_source'],
    'host_manager/__init__.py': [_HOST_MANAGER + 'test_refresh'],
    'host_manager/manager.py': _HOST_CACHE_TESTS,
    'host_manager/cache.py': _HOST_CACHE_TESTS,
    'host_manager/placements.py': _HOST_CACHE_TESTS,
    'host_manager/flags.py': _HOST_CACHE_TESTS,
    'host_manager/snapshot.py': _HOST_CACHE_TESTS,
    'host_manager/rows.py': _HOST_CACHE_TESTS,
    'host_manager/state.py': [_HOST_MANAGER + 'test_isolation',
                              _HOST_MANAGER + 'test_reuse',
                              _HOST_MANAGER + 'test_requests'],
    'host_manager/freezing.py': [
        _HOST_MANAGER + 'test_freezing',
        _HOST_MANAGER + 'test_background.FreezingTest'],
    'host_manager/filtering.py': [
        _HOST_MANAGER + 'test_handlers.FilterHandlerTest'],
    'host_manager/weighing.py': [
        _HOST_MANAGER + 'test_handlers.WeightHandlerTest'],
    'db/store.py': ['tests.unit.db.test_store'],
    'db/record_rows.py': ['tests.unit.db.test_store',
                          'tests.unit.db.test_relief'],
    'db/relief_rows.py': ['tests.unit.db.test_relief'],
    'db/recommendation_rows.py': ['tests.unit.db.test_store',
                                  _LIVE + 'test_recommendations'],
    'db/maintenance_rows.py': ['tests.unit.db.test_store',
                               'tests.unit.db.test_maintenance_queue'],
    'simulate/scoring.py': [_SIMULATE + 'test_scoring'],
    'simulate/cluster.py': [_SIMULATE + 'test_cluster'],
    'simulate/traces.py': [_SIMULATE + 'test_traces'],
    'simulate/engine.py': [_SIMULATE + 'test_engine',
                           _SIMULATE + 'test_engine_maintenance',
                           _SIMULATE + 'test_power'],
}

_EQUIVALENT = re.compile(r'^\| `(?P<module>[^`]+)` \| `(?P<before>[^`]+)` \| '
                         r'`(?P<after>[^`]+)` \| (?P<reason>.+) \|$')


@dataclasses.dataclass
class Result:
    module: str
    mutants: int = 0
    killed: int = 0
    equivalent: int = 0
    survivors: list = dataclasses.field(default_factory=list)
    #: Operator applications cosmic-ray itself failed on (no mutant).
    not_made: int = 0
    #: Listed equivalents of the module that no mutant matches any more.
    stale: list = dataclasses.field(default_factory=list)

    @property
    def score(self) -> float:
        judged = self.mutants - self.equivalent
        return 100.0 * self.killed / judged if judged else 100.0


def equivalents() -> set:
    """``{(module, before, after)}`` listed in doc/mutation-testing.md."""
    found = set()
    for line in DOC.read_text().splitlines():
        match = _EQUIVALENT.match(line.strip())
        if match:
            found.add(tuple(match[part].replace('\\|', '|').strip()
                            for part in ('module', 'before', 'after')))
    return found


def changed_line(diff: str) -> tuple[str, str]:
    """The (original, mutated) source line of a one-line mutation."""
    removed = [line[1:].strip() for line in diff.splitlines()
               if line.startswith('-') and not line.startswith('---')]
    added = [line[1:].strip() for line in diff.splitlines()
             if line.startswith('+') and not line.startswith('+++')]
    return ' '.join(removed), ' '.join(added)


def copy_tree(target: pathlib.Path) -> None:
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(
        '.tox', '.git', '.stestr', '.mutation', '.hypothesis',
        '__pycache__', '*.egg-info', 'demo-output', 'bench-output'))


#: Imported once by the fork server: Nova and the test framework, none of
#: the modules to mutate (the child must read those from disk).
PRELOAD = ('tests.unit', 'nova.test', 'nova.tests.unit.scheduler.fakes',
           'nova.scheduler.filters', 'nova.scheduler.weights', 'hypothesis',
           'testtools', 'testscenarios')


def _run_child(tests: list[str]) -> int:
    """Run ``tests`` in this (forked) process; 0 when they all pass."""
    import unittest
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    suite = unittest.defaultTestLoader.loadTestsFromNames(tests)
    result = unittest.TextTestRunner(stream=open(os.devnull, 'w'),
                                     failfast=True).run(suite)
    return 0 if result.wasSuccessful() and result.testsRun else 1


def serve(path: str, timeout: float) -> None:
    """Answer each client with the exit status of a forked test run."""
    import importlib
    for name in PRELOAD:
        importlib.import_module(name)
    mutated = {f'{PACKAGE}.{m[:-3]}'.replace('/', '.').removesuffix(
        '.__init__') for m in MODULES}
    early = sorted(mutated & set(sys.modules))
    if early:
        raise SystemExit(f'preloading imported modules to mutate: {early}')
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    while True:
        conn, _ = server.accept()
        with conn:
            tests = json.loads(conn.makefile().readline())
            pid = os.fork()
            if pid == 0:
                code = 3
                try:
                    code = _run_child(tests)
                finally:
                    os._exit(code)
            conn.sendall(b'%d\n' % _wait(pid, timeout))


def _wait(pid: int, timeout: float) -> int:
    """The child's exit status; killed (non-zero) after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return 124


def client(path: str, tests: list[str]) -> int:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(path)
        conn.sendall(json.dumps(tests).encode() + b'\n')
        return int(conn.makefile().readline())


def run_module(module: str, tree: pathlib.Path, server: str,
               timeout: float, recheck: bool) -> Result:
    """Mutate ``module`` and test every mutant, or with ``recheck`` only
    the survivors of its kept session (tests added since can only kill
    more; the module itself must be unchanged)."""
    tests = ' '.join(MODULES[module])
    config = tree / 'mutation.toml'
    config.write_text(
        '[cosmic-ray]\n'
        f'module-path = "{PACKAGE}/{module}"\n'
        f'timeout = {timeout + 60}\n'
        'excluded-modules = []\n'
        f'test-command = "{sys.executable} {__file__} --client {server} '
        f'{tests}"\n'
        '[cosmic-ray.distributor]\n'
        'name = "local"\n')
    SESSIONS.mkdir(exist_ok=True)
    session = _session(module)
    # A module with no kept session has no survivors to recheck: run it all.
    if recheck and session.exists():
        with sqlite3.connect(session) as db:
            db.execute("DELETE FROM work_results WHERE test_outcome = "
                       "'SURVIVED'")
        steps = ('baseline', 'exec')
    else:
        session.unlink(missing_ok=True)
        steps = ('baseline', 'init', 'exec')
    for step in steps:
        args = [COSMIC_RAY, step, str(config)]
        if step != 'baseline':
            args.append(str(session))
        subprocess.run(args, cwd=tree, check=True)
    return collect(module)


def _session(module: str) -> pathlib.Path:
    return SESSIONS / (module.replace('/', '.') + '.sqlite')


def collect(module: str) -> Result:
    from cosmic_ray.work_db import WorkDB
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import TestOutcome
    from cosmic_ray.work_item import WorkerOutcome

    result = Result(module)
    listed = equivalents()
    made = set()
    with use_db(str(_session(module)), WorkDB.Mode.open) as db:
        for _, outcome in db.completed_work_items:
            if outcome.worker_outcome == WorkerOutcome.EXCEPTION:
                # cosmic-ray 8.7.0's ExceptionReplacer fails on a dotted
                # name in an except tuple: no mutant, nothing tested.
                if _OPERATOR_FAILED in (outcome.output or ''):
                    result.not_made += 1
                    continue
                raise SystemExit(f'{module}: cosmic-ray failed: '
                                 f'{outcome.output}')
            result.mutants += 1
            before, after = changed_line(outcome.diff or '')
            made.add((module, before, after))
            if outcome.test_outcome != TestOutcome.SURVIVED:
                result.killed += 1
            elif (module, before, after) in listed:
                result.equivalent += 1
            else:
                result.survivors.append(outcome.diff)
        pending = db.num_work_items - db.num_results
    result.stale = sorted(entry[1:] for entry in listed - made
                          if entry[0] == module)
    if pending:
        raise SystemExit(f'{module}: {pending} mutants were not run')
    return result


_OPERATOR_FAILED = 'cosmic_ray/operators/'


def report(results: list[Result]) -> None:
    for result in results:
        for diff in result.survivors:
            print(f'SURVIVED in {result.module}:\n{diff}')
        for before, after in result.stale:
            print(f'STALE in {result.module}: listed equivalent '
                  f'`{before}` → `{after}` matches no mutant')
        if result.not_made:
            print(f'{result.module}: cosmic-ray could not make '
                  f'{result.not_made} mutants')
    print('| module | mutants | killed | equivalent | survived | score |')
    print('|---|---|---|---|---|---|')
    for r in results:
        survived = r.mutants - r.killed - r.equivalent
        print(f'| {r.module} | {r.mutants} | {r.killed} | {r.equivalent} '
              f'| {survived} | {r.score:.1f}% |')


def mutate(modules: list[str], timeout: float,
           recheck: bool) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix='mutation-') as tmp:
        tree = pathlib.Path(tmp) / 'tree'
        copy_tree(tree)
        os.environ['PYTHONPATH'] = str(tree)
        path = os.path.join(tmp, 'server.sock')
        SESSIONS.mkdir(exist_ok=True)
        log_path = SESSIONS / f'server-{os.getpid()}.log'
        log = open(log_path, 'w')
        server = subprocess.Popen(
            [sys.executable, __file__, '--serve', path,
             '--timeout', str(timeout)], cwd=tree, stderr=log)
        try:
            while not os.path.exists(path):
                if server.poll() is not None:
                    raise SystemExit('the test server did not start')
                time.sleep(0.1)
            results = []
            for module in modules:
                results.append(run_module(module, tree, path, timeout,
                                          recheck))
                # A dead server would make every later mutant look killed.
                if server.poll() is not None:
                    raise SystemExit('the test server died')
            log_path.unlink()
            return results
        finally:
            server.kill()
            server.wait()
            log.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('modules', nargs='*', metavar='MODULE',
                        help='default: all of ' + ', '.join(MODULES))
    parser.add_argument('--timeout', type=float, default=300.0,
                        help='seconds one test run may take before the '
                        'mutant counts as killed (an endless loop)')
    parser.add_argument('--recheck', action='store_true',
                        help='run only the survivors of the kept sessions '
                        'again (after adding tests)')
    parser.add_argument('--report-only', action='store_true',
                        help='recount the sessions kept in .mutation/')
    parser.add_argument('--serve', metavar='SOCKET', help=argparse.SUPPRESS)
    parser.add_argument('--client', metavar='SOCKET', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.timeout)
    if args.client:
        return client(args.client, args.modules)
    modules = args.modules or list(MODULES)
    unknown = sorted(set(modules) - set(MODULES))
    if unknown:
        parser.error(f'unknown modules: {unknown}')
    if args.report_only:
        results = [collect(m) for m in modules]
    else:
        results = mutate(modules, args.timeout, args.recheck)
    report(results)
    return 0 if all(r.score >= 95.0 for r in results) else 1


if __name__ == '__main__':
    sys.exit(main())
