"""``ipmi``: chassis power through IPMI over LAN (pyghmi).

Each host's BMC address, port (623 unless set), user and password come
from the credentials file. Every call runs in a short-lived process
(:mod:`.ipmi_call`) that is killed at ``[drs] power_timeout``: pyghmi
cannot bound a login itself, and the scheduler keeps none of its state.
"""

import json
import logging
import subprocess
import sys
import threading

from nova_drs_scheduler.power import base
from nova_drs_scheduler.power import credentials

LOG = logging.getLogger(__name__)

REQUIRED = frozenset({'address', 'username', 'password'})
ALLOWED = REQUIRED | {'port'}
DEFAULT_PORT = 623

_VERBS = {'on': 'power on', 'off': 'power off', 'state': 'power state'}


class IpmiDriver(base.PowerDriver):
    """Powers hosts through their BMCs."""

    def __init__(self, conf):
        super().__init__(conf)
        self._timeout = conf.drs.power_timeout
        self._hosts = credentials.read(conf, 'ipmi', REQUIRED, ALLOWED)
        for host, found in self._hosts.items():
            _port(conf, host, found)

    def __repr__(self) -> str:
        return f'<IpmiDriver hosts={sorted(self._hosts)}>'

    def manages(self, host: str) -> bool:
        return host in self._hosts

    def power_on(self, host: str) -> None:
        self._call(host, 'on')

    def power_off(self, host: str) -> None:
        self._call(host, 'off')

    def state(self, host: str) -> str:
        return self._call(host, 'state')

    def _call(self, host: str, action: str) -> str:
        verb = _VERBS[action]
        found = credentials.of(self.conf, self._hosts, host, verb)
        port = _port(self.conf, host, found)
        bmc = f'{found["address"]}:{port}'
        request = {'action': action, 'address': found['address'],
                   'port': port, 'username': found['username'],
                   'password': found['password'],
                   # Polls of about a second each for power-on, leaving
                   # time for the process to start and log in.
                   'wait': max(1, int(self._timeout) - 3)}
        LOG.debug('IPMI %s of host %s through the BMC at %s', verb, host, bmc)
        stdout, stderr, returncode, expired = self._run(json.dumps(request))
        try:
            answer = json.loads(stdout)
        except ValueError:
            if expired:
                raise base.PowerError(
                    host, f'{verb} failed: the BMC at {bmc} did not answer '
                          f'within {self._timeout:g} s ([drs] '
                          f'power_timeout).') from None
            lines = stderr.strip().splitlines() or ['no output']
            raise base.PowerError(
                host, f'{verb} failed: the IPMI process ended with status '
                      f'{returncode} ({credentials.scrub(lines[-1], found)}).'
            ) from None
        if 'error' in answer:
            detail = credentials.scrub(answer['detail'], found)
            raise base.PowerError(host, _failure(verb, bmc, answer['error'],
                                                 detail))
        return answer['state']

    def _run(self, request: str) -> tuple[str, str, int, bool]:
        """Run :mod:`.ipmi_call`, killed at the timeout.

        A timer kills it rather than ``subprocess.run(timeout=...)``:
        eventlet's patched subprocess raises a TimeoutExpired of its own
        copy of the module, which the stdlib's name would not catch.
        """
        process = subprocess.Popen(
            [sys.executable, '-m', 'nova_drs_scheduler.power.ipmi_call'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        expired = threading.Event()

        def expire():
            expired.set()
            process.kill()

        timer = threading.Timer(self._timeout, expire)
        timer.start()
        try:
            stdout, stderr = process.communicate(request)
        finally:
            timer.cancel()
        return stdout, stderr, process.returncode, expired.is_set()


def _failure(verb: str, bmc: str, kind: str, detail: str) -> str:
    if kind == 'silent':
        return f'{verb} failed: no answer from the BMC at {bmc}.'
    if kind == 'refused':
        return (f'{verb} failed: the BMC at {bmc} refused the credentials '
                f'({detail}).')
    if kind == 'address':
        return f'{verb} failed: cannot reach the BMC address {bmc} ({detail}).'
    return f'{verb} failed: the BMC at {bmc} answered: {detail}.'


def _port(conf, host: str, found) -> int:
    text = found.get('port', str(DEFAULT_PORT))
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 0 < port < 65536:
        raise ValueError(
            f'Invalid value for option [drs] power_credentials_file: '
            f'{conf.drs.power_credentials_file}: [{host}] port must be a '
            f'UDP port number (1-65535).')
    return port
