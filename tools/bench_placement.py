#!/usr/bin/env python3
"""Placement in a process of its own, for the benchmarks' ``--placement
process``: as deployed, not inside the scheduler's process.

Inside the scheduler's process (Nova's ``PlacementFixture``, wsgi-intercept)
every placement query holds the GIL that the scheduler's other threads
need; in a deployment placement is another service, and the scheduler
waits for it on a socket. :func:`served` starts placement's own WSGI
application (``placement.wsgi.api``, ``noauth2``, its schema created by its
own migrations at startup) on a free port of 127.0.0.1 with a SQLite file
in a temp dir, served by a multi-threaded ``wsgiref`` server, and stops it
and removes the directory afterwards, whatever happens. The server also
exits when its standard input closes, so it never outlives the benchmark,
even one killed.

Run as a script, this module is that server: ``bench_placement.py``, with
``OS_PLACEMENT_CONFIG_DIR`` set; it prints its port once it serves.
"""

import configparser
import contextlib
import dataclasses
import os
import signal
import socketserver
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from wsgiref import simple_server

from oslo_log import log

#: Seconds the server gets to exit once told before it is killed.
STOP_TIMEOUT = 10


@dataclasses.dataclass(frozen=True)
class Served:
    #: Placement's endpoint, e.g. ``http://127.0.0.1:40123``.
    url: str
    #: SQLAlchemy URL of placement's database file.
    db_url: str


@contextlib.contextmanager
def served() -> Iterator[Served]:
    """Placement in a child process, until the block ends."""
    with tempfile.TemporaryDirectory(prefix='bench-placement-') as workdir:
        path = os.path.join(workdir, 'placement.db')
        # A request's claim is written while a period's query reads: in
        # WAL mode, as on a server, neither waits for the other.
        with contextlib.closing(sqlite3.connect(path)) as conn:
            conn.execute('PRAGMA journal_mode=WAL')
        write_config(workdir, f'sqlite:///{path}')
        child = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, OS_PLACEMENT_CONFIG_DIR=workdir))
        try:
            port = child.stdout.readline().strip()
            if not port.isdigit():
                raise RuntimeError(
                    f'placement did not start (exit status {child.poll()}, '
                    'its errors above)')
            yield Served(f'http://127.0.0.1:{port}', f'sqlite:///{path}')
        finally:
            child.stdin.close()
            try:
                child.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            child.stdout.close()


def write_config(workdir: str, connection: str) -> None:
    """placement.conf as ``tox -e e2e`` deploys it (tools/e2e/e2e/conf.py),
    plus the schema at startup, and no log line per request or
    migration."""
    parser = configparser.ConfigParser()
    parser['DEFAULT'] = {'debug': 'False', 'default_log_levels': ','.join(
        log.get_default_log_levels() + [
            'routes=INFO', 'alembic=WARNING',
            'placement.requestlog=WARNING'])}
    parser['api'] = {'auth_strategy': 'noauth2'}
    parser['placement_database'] = {'connection': connection,
                                    'sync_on_startup': 'True'}
    with open(os.path.join(workdir, 'placement.conf'), 'w',
              encoding='utf-8') as handle:
        parser.write(handle)


class ThreadingWSGIServer(socketserver.ThreadingMixIn,
                          simple_server.WSGIServer):
    """A thread per connection, as gunicorn's ``gthread`` workers."""

    daemon_threads = True


class QuietHandler(simple_server.WSGIRequestHandler):
    """No access log line on stderr per request."""

    def log_message(self, format, *args):
        pass


def serve() -> None:
    """Serve placement until standard input closes."""
    # Ctrl-C reaches the whole process group: the parent stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The port goes to the parent on stdout; placement logs there too.
    announce = os.fdopen(os.dup(sys.stdout.fileno()), 'w')
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    from placement.wsgi import api  # Reads OS_PLACEMENT_CONFIG_DIR.

    server = simple_server.make_server(
        '127.0.0.1', 0, api.application, server_class=ThreadingWSGIServer,
        handler_class=QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_port, file=announce, flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == '__main__':
    serve()
