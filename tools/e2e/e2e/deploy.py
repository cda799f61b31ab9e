"""Bring the deployment up, service by service, as an operator would.

Console scripts come from the running interpreter's environment (the tox
env, or any venv with the package installed), WSGI apps run under
gunicorn, and every service reads only its config file(s).
"""

import os
import signal
import subprocess
import sys

import requests

from e2e import conf
from e2e import servers

BIN = os.path.dirname(sys.executable)
E2E_PATH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPUTES = ('compute1', 'compute2', 'compute3')


def tool(name: str) -> str:
    return os.path.join(BIN, name)


class Deployment:

    def __init__(self, sup, base: str, log):
        self.sup = sup
        self.base = base
        self.log = log
        self.db = servers.MariaDB(sup, base)
        self.rabbit = servers.RabbitMQ(sup, base)
        self.redis = servers.Redis(sup, base)
        self.layout = conf.Layout(
            base, self.db, self.rabbit, self.redis,
            placement_port=servers.free_port(),
            api_port=servers.free_port(), fakes_port=servers.free_port(),
            exporter_ports={host: servers.free_port()
                            for host in ('scheduler-a', 'scheduler-b')})
        self.scheduler_conf = {}
        self.compute_state = {}
        self.env = {'PYTHONPATH': E2E_PATH}
        #: Extra environment of nova-drs-scheduler, e.g. the variable that
        #: forces eventlet or native threads.
        self.scheduler_env = {}

    # -- infrastructure ---------------------------------------------------

    def start_backends(self) -> None:
        self.db.start()
        self.db.create_databases(['nova_api', 'nova_cell0', 'nova',
                                  'placement', 'nova_drs'])
        self.log(f'MariaDB on 127.0.0.1:{self.db.port}')
        self.rabbit.prepare()
        self.rabbit.start()
        self.rabbit.add_user()
        self.log(f'RabbitMQ {self.rabbit.node} on 127.0.0.1:'
                 f'{self.rabbit.port} (dist {self.rabbit.dist_port}, epmd '
                 f'{self.rabbit.epmd_port})')
        self.redis.start()
        self.log(f'Redis on 127.0.0.1:{self.redis.port}')

    def write_configs(self) -> None:
        self.placement_dir = conf.placement(self.layout)
        self.api_dir = conf.nova_api(self.layout)
        self.conductor_conf = conf.conductor(self.layout)
        for host in ('scheduler-a', 'scheduler-b'):
            self.scheduler_conf[host] = conf.scheduler(self.layout, host)
        self.compute_conf = {}
        for host in COMPUTES:
            self.compute_conf[host], self.compute_state[host] = \
                conf.compute(self.layout, host)

    def sync_databases(self) -> None:
        """The documented install steps, with the conductor's nova.conf."""
        manage = [tool('nova-manage'), '--config-file', self.conductor_conf]
        self.run([tool('placement-manage'), '--config-file',
                  os.path.join(self.placement_dir, 'placement.conf'),
                  'db', 'sync'])
        self.run(manage + ['api_db', 'sync'])
        self.run(manage + ['cell_v2', 'map_cell0', '--database_connection',
                           self.db.url('nova_cell0')])
        self.run(manage + ['cell_v2', 'create_cell', '--name', 'cell1',
                           '--database_connection', self.db.url('nova'),
                           '--transport-url', self.rabbit.transport_url])
        self.run(manage + ['db', 'sync'])
        self.run([tool('nova-drs'), 'db', 'sync', '--config-file',
                  self.scheduler_conf['scheduler-a']])

    def discover_hosts(self) -> str:
        return self.run([tool('nova-manage'), '--config-file',
                         self.conductor_conf, 'cell_v2', 'discover_hosts',
                         '--verbose'])

    def run(self, argv) -> str:
        result = subprocess.run(argv, capture_output=True, text=True,
                                env=dict(os.environ, **self.env))
        if result.returncode:
            raise RuntimeError(f'{" ".join(argv[:4])}... failed '
                               f'({result.returncode}): {result.stderr}')
        return result.stdout

    # -- services ---------------------------------------------------------

    def _gunicorn(self, name, app, url, env) -> None:
        """Serve ``app`` with gunicorn configured from a file in its cwd.

        Nova's WSGI module parses ``sys.argv`` as its own command line, so
        gunicorn gets no arguments: it reads ./gunicorn.conf.py instead.
        """
        workdir = self.layout.service_dir(f'{name}-wsgi')
        port = url.rsplit(':', 1)[1]
        with open(os.path.join(workdir, 'gunicorn.conf.py'), 'w') as handle:
            handle.write(f'wsgi_app = {app!r}\n'
                         f'bind = ["127.0.0.1:{port}"]\n'
                         'workers = 1\nthreads = 8\ntimeout = 120\n'
                         'worker_class = "gthread"\n'
                         # Longer than any client's idle gap, so a client
                         # never reuses a connection being closed.
                         'keepalive = 75\n'
                         'control_socket_disable = True\n')
        self.sup.start(name, [tool('gunicorn')], env=dict(self.env, **env),
                       cwd=workdir)

        def ready():
            try:
                requests.get(url + '/', timeout=2)
                return True
            except requests.RequestException:
                return False
        servers.wait_until(ready, 120, name)

    def start_apis(self) -> None:
        self._gunicorn('fake-glance-neutron', 'e2e.fakes:application',
                       self.layout.fakes_url, {})
        self._gunicorn('placement-api', 'placement.wsgi.api:application',
                       self.layout.placement_url,
                       {'OS_PLACEMENT_CONFIG_DIR': self.placement_dir})
        self._gunicorn('nova-api', 'nova.wsgi.osapi_compute:application',
                       self.layout.api_url,
                       {'OS_NOVA_CONFIG_DIR': self.api_dir})

    def start_conductor(self) -> None:
        self.sup.start('nova-conductor', [
            tool('nova-conductor'), '--config-file', self.conductor_conf],
            env=self.env)

    def start_scheduler(self, host: str) -> None:
        self.sup.start(f'nova-drs-scheduler-{host}', [
            tool('nova-drs-scheduler'), '--config-file',
            self.scheduler_conf[host]],
            env=dict(self.env, **self.scheduler_env))

    def scheduler_log(self, host: str) -> str:
        with open(os.path.join(self.sup.log_dir,
                               f'nova-drs-scheduler-{host}.log')) as handle:
            return handle.read()

    def drs_store(self):
        """The DRS database, read as ``nova-drs`` reads it."""
        from oslo_config import cfg

        from nova_drs_scheduler import conf as drs_conf
        from nova_drs_scheduler.db import store

        config = cfg.ConfigOpts()
        drs_conf.register_opts(config)
        config.register_opt(cfg.StrOpt('state_path'))
        config(['--config-file', self.scheduler_conf['scheduler-a']],
               project='nova')
        return store.Store(config)

    rebalance_interval = conf.REBALANCE_INTERVAL

    def kill_scheduler(self, host: str) -> None:
        """SIGKILL, as a crash or the OOM killer would."""
        self.sup.kill(f'nova-drs-scheduler-{host}', signal.SIGKILL)

    def start_computes(self) -> None:
        for host in COMPUTES:
            self.sup.start(f'nova-compute-{host}', [
                sys.executable, '-m', 'e2e.compute', '--config-file',
                self.compute_conf[host]], env=self.env)

    def set_cpu(self, host: str, percent: float) -> None:
        self._write_state(host, 'cpu_percent', percent)

    def set_migration_seconds(self, seconds: float) -> None:
        for host in COMPUTES:
            self._write_state(host, 'live_migration_seconds', seconds)

    def _write_state(self, host, name, value) -> None:
        path = os.path.join(self.compute_state[host], name)
        with open(path + '.tmp', 'w') as handle:
            handle.write(f'{value}\n')
        os.replace(path + '.tmp', path)
