"""Real servers for tests, on 127.0.0.1 only, stopped at cleanup.

The binaries come from Debian packages that ``tools/install-test-servers.sh``
installs (``tools/run-tests.sh`` runs it).  A missing binary is an error
with that hint, never a skip: a skipped test would hide a broken feature.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import fixtures
import requests

INSTALL_HINT = 'run tools/install-test-servers.sh (as root) first'


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def binary(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path='/usr/sbin:/sbin')
    if not path:
        raise RuntimeError(f'{name} is not installed: {INSTALL_HINT}')
    return path


def wait_until(predicate, timeout: float, what: str, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f'timed out after {timeout}s waiting for {what}')


def eventually(check, timeout: float = 30, interval=0.5):
    """Run ``check`` until it stops raising AssertionError; re-raise last.

    For reads from a real server that fills in asynchronously (a scrape
    missed on a loaded machine leaves a series stale until the next one):
    the assertion is the same, it is just given time to hold.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() >= deadline:
                raise
        time.sleep(interval)


class ProcessFixture(fixtures.Fixture):
    """A child process, killed (and reaped) at cleanup."""

    def __init__(self, argv, log_name):
        super().__init__()
        self.argv = argv
        self.log_name = log_name

    def _setUp(self):
        self.workdir = self.useFixture(fixtures.TempDir()).path
        self.log_path = os.path.join(self.workdir, self.log_name)
        self.log = open(self.log_path, 'wb')
        self.addCleanup(self.log.close)
        self.process = subprocess.Popen(
            self.argv, stdout=self.log, stderr=subprocess.STDOUT,
            cwd=self.workdir, start_new_session=True)
        self.addCleanup(self.stop)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def output(self) -> str:
        with open(self.log_path, 'rb') as handle:
            return handle.read().decode(errors='replace')


class PrometheusServer(fixtures.Fixture):
    """A Prometheus server scraping the given targets every second.

    ``honor_labels`` keeps the exporter's own ``instance`` labels, so one
    exporter can stand for many compute hosts.
    """

    SCRAPE_INTERVAL = 1

    def __init__(self, targets):
        super().__init__()
        self.targets = targets

    def _setUp(self):
        self.port = free_port()
        self.url = f'http://127.0.0.1:{self.port}'
        config_dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, config_dir, True)
        config = os.path.join(config_dir, 'prometheus.yml')
        targets = ', '.join(f"'{target}'" for target in self.targets)
        with open(config, 'w') as handle:
            handle.write(
                'global:\n'
                f'  scrape_interval: {self.SCRAPE_INTERVAL}s\n'
                f'  evaluation_interval: {self.SCRAPE_INTERVAL}s\n'
                'scrape_configs:\n'
                '  - job_name: drs-test\n'
                '    honor_labels: true\n'
                f'    static_configs: [{{targets: [{targets}]}}]\n')
        self.process = self.useFixture(ProcessFixture([
            binary('prometheus'), f'--config.file={config}',
            f'--web.listen-address=127.0.0.1:{self.port}',
            f'--storage.tsdb.path={config_dir}/data',
        ], 'prometheus.log'))
        wait_until(self.ready, 60, 'Prometheus to be ready')

    def ready(self) -> bool:
        try:
            return requests.get(self.url + '/-/ready', timeout=1).ok
        except requests.RequestException:
            return False

    def query(self, promql: str) -> list:
        response = requests.get(self.url + '/api/v1/query',
                                params={'query': promql}, timeout=5)
        return response.json()['data']['result']

    def wait_for(self, promql: str, count: int, timeout=30):
        """Wait until ``promql`` returns ``count`` series."""
        wait_until(lambda: len(self.query(promql)) >= count, timeout,
                   f'{count} series of {promql}')


class RedisServer(fixtures.Fixture):
    """A throw-away redis-server: no persistence, loopback only."""

    def _setUp(self):
        self.port = free_port()
        self.url = f'redis://127.0.0.1:{self.port}'
        self.process = self.useFixture(ProcessFixture([
            binary('redis-server'), '--port', str(self.port),
            '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
        ], 'redis.log'))
        wait_until(self.ready, 30, 'redis-server to accept connections')

    def ready(self) -> bool:
        try:
            with socket.create_connection(('127.0.0.1', self.port), 1) as s:
                s.sendall(b'PING\r\n')
                return s.recv(16).startswith(b'+PONG')
        except OSError:
            return False
