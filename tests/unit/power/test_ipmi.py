"""The ``ipmi`` driver against a real IPMI-over-LAN BMC on 127.0.0.1."""

import logging
import os
import subprocess
import sys
import textwrap
import time

import fixtures
import testtools
from oslo_config import cfg

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler.power import base
from nova_drs_scheduler.power import ipmi
from nova_drs_scheduler.power import ipmi_call
from tests import tempfiles
from tests.unit.power import bmc

PASSWORD = 'Sw0rdf1sh-42'
USER = 'drs-power'
TIMEOUT = 8.0


def make_conf(test, text: str, timeout: float = TIMEOUT) -> cfg.ConfigOpts:
    """Options with ``text`` as the credentials file (mode 0600)."""
    path = tempfiles.write(test, text, '.conf')
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('power_driver', 'ipmi', group='drs')
    conf.set_override('power_credentials_file', path, group='drs')
    conf.set_override('power_timeout', timeout, group='drs')
    return conf


def section(host: str, port: int, password: str = PASSWORD,
            user: str = USER) -> str:
    return (f'[{host}]\naddress = 127.0.0.1\nport = {port}\n'
            f'username = {user}\npassword = {password}\n')


class IpmiDriverTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(bmc.BmcFixture(USER, PASSWORD))
        self.logs = self.useFixture(fixtures.FakeLogger(level=logging.DEBUG))

    def _driver(self, text):
        return ipmi.IpmiDriver(make_conf(self, text))

    def assertNoSecret(self, text):
        self.assertNotIn(PASSWORD, text)

    def test_powers_the_host_off_and_on(self):
        driver = self._driver(section('cn1', self.bmc.port))
        self.assertTrue(driver.manages('cn1'))

        driver.power_off('cn1')
        self.assertEqual('off', self.bmc.power())
        self.assertEqual(base.OFF, driver.state('cn1'))

        driver.power_on('cn1')
        self.assertEqual('on', self.bmc.power())
        self.assertEqual(base.ON, driver.state('cn1'))
        self.assertIsNone(driver.boot_seconds('cn1'))
        self.assertNoSecret(self.logs.output)
        self.assertNoSecret(repr(driver))
        self.assertIn('cn1', self.logs.output)

    def test_shared_default_section(self):
        text = (f'[DEFAULT]\nusername = {USER}\npassword = {PASSWORD}\n'
                f'[cn1]\naddress = 127.0.0.1\nport = {self.bmc.port}\n')
        driver = ipmi.IpmiDriver(make_conf(self, text))
        driver.power_off('cn1')
        self.assertEqual('off', self.bmc.power())

    def _refused(self, text):
        driver = ipmi.IpmiDriver(make_conf(self, text))
        started = time.monotonic()
        error = self.assertRaises(base.PowerError, driver.power_off, 'cn1')
        self.assertLess(time.monotonic() - started, TIMEOUT)
        self.assertEqual('cn1', error.host)
        message = str(error)
        self.assertIn('host cn1', message)
        self.assertIn(f'BMC at 127.0.0.1:{self.bmc.port} refused the '
                      'credentials', message)
        self.assertNoSecret(message)
        self.assertNoSecret(repr(error))
        self.assertNoSecret(self.logs.output)
        # Nothing happened to the machine.
        self.assertEqual('on', self.bmc.power())
        return message

    def test_wrong_password_is_one_clear_error(self):
        message = self._refused(section('cn1', self.bmc.port,
                                        password='not-' + PASSWORD))
        self.assertIn('Incorrect password', message)
        self.assertNotIn('not-' + PASSWORD, message)

    def test_unknown_user_is_one_clear_error(self):
        message = self._refused(section('cn1', self.bmc.port, user='nobody'))
        self.assertIn('Unauthorized name', message)
        self.assertNotIn('nobody', message)

    def test_unknown_host(self):
        driver = self._driver(section('cn1', self.bmc.port))
        self.assertFalse(driver.manages('cn2'))
        error = self.assertRaises(base.PowerError, driver.power_on, 'cn2')
        self.assertIn('has no [cn2] section', str(error))


class SilentBmcTest(testtools.TestCase):

    def test_a_bmc_that_never_answers_fails_within_the_timeout(self):
        silent = self.useFixture(bmc.SilentPortFixture())
        logs = self.useFixture(fixtures.FakeLogger(level=logging.DEBUG))
        driver = ipmi.IpmiDriver(make_conf(
            self, section('cn1', silent.port), timeout=2.0))
        started = time.monotonic()
        error = self.assertRaises(base.PowerError, driver.power_on, 'cn1')
        elapsed = time.monotonic() - started
        self.assertGreaterEqual(elapsed, 2.0)
        self.assertLess(elapsed, 4.0)
        self.assertEqual(
            f'power management of host cn1: power on failed: the BMC at '
            f'127.0.0.1:{silent.port} did not answer within 2 s ([drs] '
            f'power_timeout).', str(error))
        self.assertNotIn(PASSWORD, logs.output)
        # The BMC got the login attempts: the port was really tried.
        silent.socket.settimeout(0)
        self.assertTrue(silent.socket.recv(4096))


class ConcurrencyModesTest(testtools.TestCase):
    """The driver in a fresh process, with eventlet's patching (Nova's
    eventlet mode, the functional tests) and without it (the scheduler's
    threading mode), whatever this test process runs under."""

    def _power_cycle(self, patch: str, patched: bool):
        server = self.useFixture(bmc.BmcFixture(USER, PASSWORD))
        path = tempfiles.write(self, section('cn1', server.port), '.conf')
        script = patch + textwrap.dedent(f'''
            from oslo_config import cfg
            from nova_drs_scheduler import conf as drs_conf
            from nova_drs_scheduler.power import ipmi
            conf = cfg.ConfigOpts()
            drs_conf.register_opts(conf)
            conf([], default_config_files=[])
            conf.set_override('power_credentials_file', {path!r}, 'drs')
            conf.set_override('power_timeout', 8.0, 'drs')
            driver = ipmi.IpmiDriver(conf)
            driver.power_off('cn1')
            print(driver.state('cn1'))
            driver.power_on('cn1')
            print(driver.state('cn1'))
            from eventlet import patcher
            assert patcher.is_monkey_patched('thread') == {patched}
        ''')
        done = subprocess.run([sys.executable, '-c', script],
                              capture_output=True, text=True, timeout=90,
                              check=False, cwd=os.getcwd())
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertEqual(['off', 'on'], done.stdout.split())
        self.assertEqual('on', server.power())

    def test_eventlet_patched(self):
        self._power_cycle('import eventlet\neventlet.monkey_patch()\n', True)

    def test_plain_threads(self):
        self._power_cycle('', False)


class ClassifyTest(testtools.TestCase):
    """pyghmi's failures, as its client raises them, worded by kind."""

    def test_kinds(self):
        from pyghmi import exceptions
        cases = [
            (exceptions.IpmiException(None), 'silent'),
            (exceptions.IpmiException('Session no longer connected'),
             'silent'),
            (exceptions.IpmiException('Incorrect password provided'),
             'refused'),
            (exceptions.IpmiException('Unauthorized name in RAKP2'),
             'refused'),
            (exceptions.IpmiException(
                'Unable to transmit to specified address'), 'address'),
            (OSError(-2, 'Name or service not known'), 'address'),
            (exceptions.IpmiException(
                'System did not accomplish power state change'), 'error'),
        ]
        for exc, kind in cases:
            self.assertEqual(kind, ipmi_call.classify(exc)['error'], exc)


class ConfigTest(testtools.TestCase):

    def test_port_must_be_a_port(self):
        for port in ('0', '70000', 'ipmi'):
            error = self.assertRaises(
                ValueError, ipmi.IpmiDriver,
                make_conf(self, section('cn1', 623).replace(
                    'port = 623', f'port = {port}')))
            self.assertIn('[drs] power_credentials_file', str(error))
            self.assertIn('[cn1] port', str(error))

    def test_a_crashed_helper_is_one_scrubbed_error(self):
        driver = ipmi.IpmiDriver(make_conf(self, section('cn1', 623)))
        self.useFixture(fixtures.MockPatchObject(
            driver, '_run', return_value=(
                '', f'Traceback (most recent call last):\nValueError: '
                    f'{USER} {PASSWORD}\n', 1, False)))
        error = self.assertRaises(base.PowerError, driver.power_off, 'cn1')
        self.assertEqual(
            'power management of host cn1: power off failed: the IPMI '
            'process ended with status 1 (ValueError: *** ***).', str(error))

    def test_missing_password(self):
        error = self.assertRaises(
            ValueError, ipmi.IpmiDriver,
            make_conf(self, '[cn1]\naddress = 10.0.0.1\nusername = u\n'))
        self.assertIn("[cn1] needs 'password'", str(error))
