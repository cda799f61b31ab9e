"""The commands of doc/operations.md, run against the deployment.

The runbook marks every command an operator types as a ``$ `` line of a
```console block.  Each one has a :data:`RUNNERS` entry here: the exit
codes it may end with, what its output must show, and which step of the
run types it.  ``tests/unit/test_operations_doc.py`` fails when the page
has a command no runner knows, or a runner's command left the page; the
run's last step fails when a command of the page did not run.

Commands read ``/etc/nova/nova.conf`` as the page says; here each
``nova-drs`` and ``nova-manage`` gets ``--config-file`` with a
scheduler's nova.conf, and ``<placeholders>`` get the deployment's
values.  A command runs in ``bash -o pipefail``, so a pipeline fails when
any part of it does (``grep`` finding nothing included).
"""

import dataclasses
import os
import re
import subprocess
import sys

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                   os.pardir, os.pardir, 'doc', 'operations.md')
PLACEHOLDER = re.compile(r'<([a-z_]+)>')
#: The placeholders the run fills: the steps give ``host``, ``server``
#: (a name) and ``server_uuid``; :meth:`Runbook.values` the others.
FILLED = frozenset({'host', 'server', 'server_uuid', 'scheduler', 'port',
                    'leader', 'redis_host', 'redis_port', 'drs_revision',
                    'reason'})


@dataclasses.dataclass(frozen=True)
class Runner:
    #: Exit codes that pass.
    rcs: tuple = (0,)
    #: Text the output must hold, placeholders substituted.
    shows: tuple = ()
    #: The step that types it: ``healthy`` (:meth:`Runbook.healthy`,
    #: after the rebalance) or ``drain`` (``maintenance.drain``).
    step: str = 'healthy'


#: Typed by ``maintenance.drain`` on the host it drains.
ENTER = ('nova-drs maintenance enter <host> --reason "<reason>" --wait '
         '--timeout 1800')
STATUS_HOST = 'nova-drs maintenance status <host>'
EXIT = 'nova-drs maintenance exit <host>'

RUNNERS = {
    # What to watch.
    'curl -s http://<scheduler>:<port>/metrics | grep ^nova_drs_':
        Runner(shows=('nova_drs_leader 1.0', 'nova_drs_periods_run_total',
                      'nova_drs_host_violated{host="<host>"} 0.0',
                      'nova_drs_moves_total{status="completed"}')),
    # A healthy period.
    'nova-drs status':
        Runner(shows=('Hosts', '<host>', 'Servers not movable now',
                      '<server>', 'cooldown',
                      'Servers needing attention')),
    'nova-drs history --limit 5':
        Runner(shows=('Periods', 'automatic', 'Moves')),
    'nova-drs plan':
        Runner(shows=('Hosts', '<host>', 'Moves')),
    # A move failed.
    'nova-drs history --moves-only --limit 20':
        Runner(shows=('<server>', '<host>', 'completed')),
    'nova-drs explain <server>':
        Runner(shows=('<server>', 'cooldown')),
    'nova-drs explain <host>':
        Runner(shows=('<host>',)),
    # An instance needs attention.
    "nova-drs --json status | jq '.attention, .blocked'":
        Runner(shows=('<server_uuid>', 'cooldown')),
    # The leader.
    "nova-drs --json history --limit 5 | jq -r '.[] | [.time, .scheduler, "
    ".skipped // \"-\"] | @tsv'":
        Runner(shows=('<leader>',)),
    'redis-cli -h <redis_host> -p <redis_port> ping':
        Runner(shows=('PONG',)),
    # The DRS database; upgrades.
    'nova-drs db version':
        Runner(shows=('<drs_revision>',)),
    'nova-drs db sync':
        Runner(shows=('<drs_revision>',)),
    'nova-drs --version':
        Runner(shows=('nova-drs ', '(nova ')),
    'nova-manage api_db sync': Runner(),
    'nova-manage db sync': Runner(),
    'nova-manage db online_data_migrations':
        Runner(shows=('Migration',)),
    # Maintenance.
    'nova-drs maintenance status':
        Runner(shows=('Hosts in maintenance', 'Blocking instances')),
    ENTER: Runner(shows=('<host>: drained',), step='drain'),
    STATUS_HOST: Runner(shows=('<host>', 'drained'), step='drain'),
    EXIT: Runner(shows=('<host>',), step='drain'),
}


def commands(text: str) -> list:
    """Every ``$ `` line of the ```console blocks of ``text`` (indented
    ones included, as in a list), in order."""
    found = []
    block = False
    for line in (line.strip() for line in text.splitlines()):
        if line.startswith('```'):
            block = line == '```console' if not block else False
        elif block and line.startswith('$ '):
            found.append(line[2:].strip())
    return found


def doc_commands() -> list:
    with open(DOC, encoding='utf-8') as handle:
        return commands(handle.read())


def placeholders(command: str) -> set:
    return set(PLACEHOLDER.findall(command))


def substitute(text: str, values: dict) -> str:
    """``text`` with each ``<name>`` replaced (KeyError: not given)."""
    return PLACEHOLDER.sub(lambda match: str(values[match.group(1)]), text)


def with_conf(command: str, conf: str) -> str:
    """``command`` with ``--config-file conf`` for the program that heads
    its pipeline, if it reads nova.conf: after ``nova-drs``'s subcommand
    (an option of each subcommand), before ``nova-manage``'s (a global
    option there)."""
    head, pipe, tail = command.partition(' | ')
    program = head.split(' ', 1)[0]
    if program == 'nova-drs':
        head = f'{head} --config-file {conf}'
    elif program == 'nova-manage':
        head = head.replace('nova-manage', f'nova-manage --config-file '
                            f'{conf}', 1)
    return head + pipe + tail


class Runbook:
    """Runs the page's commands in the deployment ``sc`` and checks them
    against their runner; remembers which ran."""

    def __init__(self, sc):
        self.sc = sc
        self.doc = doc_commands()
        self.ran = set()

    def line(self, template: str, values: dict, scheduler=None) -> str:
        """The shell line of ``template``, as the run types it."""
        if template not in self.doc:
            raise KeyError(f'not a command of doc/operations.md: '
                           f'{template}')
        conf = self.sc.dep.scheduler_conf[scheduler or self.sc.leader]
        return with_conf(substitute(template, values), conf)

    def argv(self, template: str, values: dict, scheduler=None) -> list:
        """``bash -o pipefail -c LINE``, with the env's programs first on
        PATH; ``template`` counts as run."""
        line = self.line(template, values, scheduler)
        self.ran.add(template)
        return ['bash', '-o', 'pipefail', '-c', line]

    @staticmethod
    def env() -> dict:
        bindir = os.path.dirname(sys.executable)
        return dict(os.environ, PATH=f'{bindir}:{os.environ["PATH"]}')

    def run(self, template: str, values: dict, scheduler=None) -> tuple:
        """Type ``template``; check it; ``(rc, stdout, stderr)``."""
        result = subprocess.run(self.argv(template, values, scheduler),
                                capture_output=True, text=True,
                                timeout=300, env=self.env())
        self.judge(template, values, result.returncode, result.stdout,
                   result.stderr)
        return result.returncode, result.stdout, result.stderr

    def judge(self, template: str, values: dict, rc, out: str,
              err: str = '') -> bool:
        """The runner's check of one run of ``template``."""
        runner = RUNNERS[template]
        missing = [text for text in
                   (substitute(s, values) for s in runner.shows)
                   if text not in out]
        passed = rc in runner.rcs and not missing
        detail = f'rc {rc}, {len(out.splitlines())} line(s)'
        if not passed:
            detail += (f', output lacks {missing}: {out[-500:]!r}; '
                       f'stderr: {err.strip()[-300:]!r}')
        return self.sc.report.check(
            f'doc/operations.md: $ {substitute(template, values)}',
            passed, detail)

    def healthy(self) -> None:
        """Every ``healthy`` command, on the deployment as the rebalance
        left it: compute1 cured, its moved server in cooldown."""
        sc = self.sc
        sc.report.step('doc/operations.md: the runbook\'s commands against '
                       'the deployment')
        rebalanced = getattr(sc, 'rebalanced', None)
        moved = rebalanced[0]['instance_uuid'] if rebalanced else '?'
        server = sc.nova.server(moved) if rebalanced else {'name': '?'}
        values = self.values(host='compute1', server=server['name'],
                             server_uuid=moved)
        for template in self.doc:
            runner = RUNNERS.get(template)
            if runner is None:
                sc.report.check(f'doc/operations.md: $ {template}: a '
                                'runner knows it', False)
            elif runner.step == 'healthy':
                self.run(template, values)

    def values(self, **given) -> dict:
        """The placeholders' values in this deployment."""
        from nova_drs_scheduler.db import migration

        dep = self.sc.dep
        return dict({
            'scheduler': '127.0.0.1',
            'port': dep.layout.exporter_ports[self.sc.leader],
            'leader': self.sc.leader,
            'redis_host': '127.0.0.1', 'redis_port': dep.redis.port,
            'drs_revision': migration.head(), 'reason': 'e2e',
        }, **given)

    def all_ran(self) -> None:
        """The run's last check: every command of the page ran."""
        left = [c for c in self.doc if c not in self.ran]
        self.sc.report.check('doc/operations.md: every command ran against '
                             'the deployment', not left,
                             f'{len(self.doc)} commands'
                             + (f'; not run: {left}' if left else ''))
