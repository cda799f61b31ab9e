"""MariaDB, RabbitMQ and Redis, private to the run and on 127.0.0.1.

Each keeps its data, socket, logs and (for RabbitMQ) Erlang cookie and
epmd under the run's temp directory, so nothing touches the system's
instances of the same servers.
"""

import os
import shutil
import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def wait_until(predicate, timeout: float, what: str, interval=0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f'timed out after {timeout:.0f}s waiting for {what}')


def binary(name: str) -> str:
    path = shutil.which(name, path=os.environ['PATH'] + ':/usr/sbin:/sbin')
    if not path:
        raise RuntimeError(f'{name} not found: run tools/e2e/install.sh')
    return path


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(('127.0.0.1', port), 1):
            return True
    except OSError:
        return False


class MariaDB:

    def __init__(self, sup, base: str):
        self.sup = sup
        self.dir = os.path.join(base, 'mariadb')
        self.socket = os.path.join(self.dir, 'mysqld.sock')
        self.port = free_port()

    def url(self, database: str) -> str:
        return (f'mysql+pymysql://root@127.0.0.1:{self.port}/{database}'
                '?charset=utf8')

    def start(self) -> None:
        datadir = os.path.join(self.dir, 'data')
        os.makedirs(self.dir)
        user = ['--user=root'] if os.geteuid() == 0 else []
        subprocess.run(
            [binary('mariadb-install-db'), '--no-defaults',
             f'--datadir={datadir}', '--skip-test-db',
             '--auth-root-authentication-method=normal', *user],
            check=True, capture_output=True)
        self.sup.start('mariadb', [
            binary('mariadbd'), '--no-defaults', f'--datadir={datadir}',
            f'--socket={self.socket}', f'--port={self.port}',
            '--bind-address=127.0.0.1', '--skip-name-resolve',
            f'--pid-file={self.dir}/mysqld.pid', '--max-connections=1000',
            '--innodb-buffer-pool-size=256M',
            '--innodb-flush-log-at-trx-commit=0', *user])
        wait_until(lambda: port_open(self.port), 60, 'MariaDB')

    def create_databases(self, names) -> None:
        sql = ''.join(f'CREATE DATABASE {name} CHARACTER SET utf8mb4;'
                      for name in names)
        subprocess.run([binary('mariadb'), '--no-defaults',
                        f'--socket={self.socket}', '-uroot', '-e', sql],
                       check=True)


class RabbitMQ:
    """A RabbitMQ node with its own name, epmd, cookie and directories."""

    USER = 'nova'
    PASSWORD = 'e2e-secret'

    def __init__(self, sup, base: str):
        self.sup = sup
        self.dir = os.path.join(base, 'rabbitmq')
        self.port = free_port()
        self.dist_port = free_port()
        self.epmd_port = free_port()
        self.node = f'drs-e2e-{os.getpid()}@localhost'
        self.env = {
            'HOME': self.dir,  # .erlang.cookie lives here
            'RABBITMQ_NODENAME': self.node,
            'RABBITMQ_NODE_IP_ADDRESS': '127.0.0.1',
            'RABBITMQ_NODE_PORT': str(self.port),
            'RABBITMQ_DIST_PORT': str(self.dist_port),
            'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS':
                '-kernel inet_dist_use_interface {127,0,0,1}',
            'ERL_EPMD_ADDRESS': '127.0.0.1',
            'ERL_EPMD_PORT': str(self.epmd_port),
            'RABBITMQ_MNESIA_BASE': os.path.join(self.dir, 'mnesia'),
            'RABBITMQ_LOG_BASE': os.path.join(self.dir, 'log'),
            'RABBITMQ_LOGS': os.path.join(self.dir, 'log', 'rabbit.log'),
            'RABBITMQ_CONFIG_FILE': os.path.join(self.dir, 'rabbitmq'),
            'RABBITMQ_ADVANCED_CONFIG_FILE':
                os.path.join(self.dir, 'advanced.config'),
            'RABBITMQ_ENABLED_PLUGINS_FILE':
                os.path.join(self.dir, 'enabled_plugins'),
            'RABBITMQ_CONF_ENV_FILE': os.path.join(self.dir, 'rabbitmq-env'),
            'RABBITMQ_PID_FILE': os.path.join(self.dir, 'rabbit.pid'),
        }

    @property
    def transport_url(self) -> str:
        return (f'rabbit://{self.USER}:{self.PASSWORD}@127.0.0.1:'
                f'{self.port}/nova')

    def prepare(self) -> None:
        os.makedirs(os.path.join(self.dir, 'log'))
        files = {'enabled_plugins': '[].\n', 'rabbitmq-env': '',
                 'rabbitmq.conf': 'loopback_users = none\n'}
        for name, text in files.items():
            with open(os.path.join(self.dir, name), 'w') as handle:
                handle.write(text)
        # Our own epmd, in our process group, so teardown can stop it.
        self.sup.start('epmd', [binary('epmd'), '-address', '127.0.0.1',
                                '-port', str(self.epmd_port)],
                       env=self.env)
        wait_until(lambda: port_open(self.epmd_port), 30, 'epmd')

    def start(self) -> None:
        pid_file = self.env['RABBITMQ_PID_FILE']
        if os.path.exists(pid_file):
            os.unlink(pid_file)
        self.sup.start('rabbitmq', ['/usr/lib/rabbitmq/bin/rabbitmq-server'],
                       env=self.env, cwd=self.dir)
        self.ctl('wait', '--timeout', '120', pid_file)

    def stop(self) -> None:
        self.ctl('stop')
        self.sup.stop('rabbitmq')

    def add_user(self) -> None:
        self.ctl('add_vhost', 'nova')
        self.ctl('add_user', self.USER, self.PASSWORD)
        self.ctl('set_permissions', '-p', 'nova', self.USER, '.*', '.*', '.*')

    def ctl(self, *args) -> str:
        result = subprocess.run(
            ['/usr/lib/rabbitmq/bin/rabbitmqctl', *args],
            env=dict(os.environ, **self.env), check=True,
            capture_output=True, text=True)
        return result.stdout


class Redis:

    def __init__(self, sup, base: str):
        self.sup = sup
        self.dir = os.path.join(base, 'redis')
        self.port = free_port()
        self.url = f'redis://127.0.0.1:{self.port}?lock_timeout=10'

    def start(self) -> None:
        os.makedirs(self.dir)
        self.sup.start('redis', [
            binary('redis-server'), '--port', str(self.port),
            '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
            '--dir', self.dir])
        wait_until(lambda: port_open(self.port), 30, 'redis-server')
