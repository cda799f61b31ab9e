#!/usr/bin/env python3
"""End-to-end test: nova-drs-scheduler in a real multi-process deployment.

MariaDB, RabbitMQ, Redis, placement-api, nova-api (gunicorn),
nova-conductor, nova-drs-scheduler and three fake-driver nova-computes,
all on 127.0.0.1 under one temp directory; then the scenario, the
commands of doc/operations.md and the faults of doc/e2e.md.  Ends
with ``N passed, N failed``; exit 1 on any failure.  Everything
started is stopped at the end, whatever happens.

    python tools/e2e/run.py [--keep] [--skip-faults]
                            [--scheduler-concurrency eventlet|threading]
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from e2e import deploy  # noqa: E402
from e2e import faults  # noqa: E402
from e2e import maintenance  # noqa: E402
from e2e import procs  # noqa: E402
from e2e import report as report_mod  # noqa: E402
from e2e import runbook  # noqa: E402
from e2e import scenario  # noqa: E402

#: OS_NOVA_DISABLE_EVENTLET_PATCHING values that force each mode (Nova
#: 33-34: any value but 1/true/yes means eventlet).
FORCE = {'eventlet': '0', 'threading': '1'}


def check_concurrency(dep, report, forced) -> None:
    """The scheduler logs the concurrency it runs with; check it."""
    started = scenario.wait_for(
        lambda: [line for line in dep.scheduler_log('scheduler-a')
                 .splitlines() if 'nova-drs-scheduler: manager' in line],
        bool, 60)
    line = started[0] if started else ''
    report.info(line[line.find('nova-drs-scheduler:'):])
    if forced:
        report.check(f'nova-drs-scheduler runs {forced} (forced by '
                     f'OS_NOVA_DISABLE_EVENTLET_PATCHING={FORCE[forced]})',
                     f'concurrency {forced}' in line)


def bring_up(dep, report, forced=None) -> None:
    report.step('Deploy: MariaDB, RabbitMQ, Redis')
    dep.start_backends()
    report.step('Deploy: nova.conf files; nova-manage / placement-manage '
                'database setup')
    dep.write_configs()
    dep.sync_databases()
    report.info('api_db sync, map_cell0, create_cell cell1, db sync, '
                'placement db sync: done')
    report.step('Deploy: fake Glance/Neutron, placement-api, nova-api '
                '(gunicorn), nova-conductor, nova-drs-scheduler, 3 '
                'nova-compute')
    dep.start_apis()
    dep.start_conductor()
    if forced:
        dep.scheduler_env['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = \
            FORCE[forced]
    dep.start_scheduler('scheduler-a')
    dep.start_computes()
    sc_nova = scenario.client.Nova(dep.layout.api_url)
    computes = scenario.wait_for(
        lambda: sc_nova.services('nova-compute'),
        lambda ss: len([s for s in ss if s['state'] == 'up']) == 3, 180)
    report.check('3 nova-compute services up',
                 len([s for s in computes if s['state'] == 'up']) == 3)
    report.info(dep.discover_hosts().strip().splitlines()[-1])
    schedulers = scenario.wait_for(
        lambda: sc_nova.services('nova-scheduler'),
        lambda ss: any(s['state'] == 'up' for s in ss), 60)
    report.check('nova-drs-scheduler registered as nova-scheduler, up',
                 [(s['host'], s['state']) for s in schedulers]
                 == [('scheduler-a', 'up')])
    check_concurrency(dep, report, forced)
    providers = scenario.client.Placement(
        dep.layout.placement_url).providers()
    report.check('placement has the 3 compute resource providers',
                 sorted(providers.values()) == list(deploy.COMPUTES))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--keep', action='store_true',
                        help='keep the temp directory (logs, data) after '
                             'the run; the processes are stopped anyway')
    parser.add_argument('--skip-faults', action='store_true',
                        help='run the scenario only')
    parser.add_argument('--scheduler-concurrency',
                        choices=sorted(FORCE),
                        help="force nova-drs-scheduler's concurrency mode "
                             '(default: Nova\'s, native threads since 33)')
    args = parser.parse_args()

    def interrupted(signum, _frame):
        raise SystemExit(f'interrupted by signal {signum}')
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, interrupted)

    base = tempfile.mkdtemp(prefix='nova-drs-e2e-')
    logs = os.path.join(base, 'logs')
    os.makedirs(logs)
    report = report_mod.Report()
    report.info(f'temp directory {base}')
    sup = procs.Supervisor(logs)
    dep = deploy.Deployment(sup, base, report.info)
    sc = None
    try:
        bring_up(dep, report, args.scheduler_concurrency)
        sc = scenario.Scenario(dep, report)
        book = runbook.Runbook(sc)
        steps = [sc.prepare, sc.metrics_flow, sc.rebalance, sc.cli,
                 book.healthy, lambda: maintenance.drain(sc, book)]
        if not args.skip_faults:
            steps += [lambda fault=fault: fault(sc) for fault in faults.ALL]
        steps.append(book.all_ran)
        for step in steps:
            try:
                step()
            except Exception as exc:
                report.check(f'step raised {type(exc).__name__}', False,
                             str(exc)[:300])
                traceback.print_exc()
    except BaseException as exc:
        report.check(f'deployment ({type(exc).__name__})', False,
                     str(exc)[:500])
        traceback.print_exc()
    finally:
        report.step('Teardown')
        if sc is not None:
            sc.model.stop()
        pids = [p.pid for p in sup.procs.values()]
        sup.stop_all()
        time.sleep(1)
        left = [pid for pid in pids if _exists(pid)]
        report.check('every process started was stopped', not left,
                     f'{len(pids)} process groups')
        if args.keep or report.failed:
            report.info(f'logs and data kept in {base}' if args.keep else
                        f'failed: logs in {base}/logs (delete when done)')
        if not args.keep and not report.failed:
            shutil.rmtree(base, ignore_errors=True)
    print(f'\n{report.summary()}', flush=True)
    return 1 if report.failed else 0


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


if __name__ == '__main__':
    sys.exit(main())
