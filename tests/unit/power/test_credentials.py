"""The credentials file and the start-up check of ``[drs] power_driver``."""

import os

import fixtures
import testtools
from oslo_config import cfg

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler.conf import power_driver
from nova_drs_scheduler.power import base
from nova_drs_scheduler.power import credentials
from nova_drs_scheduler.power import ipmi
from nova_drs_scheduler.power import loading
from nova_drs_scheduler.power import noop
from tests import tempfiles

SECRET = 'pa%ss-w0rd'
GOOD = (f'[DEFAULT]\nusername = drs\npassword = {SECRET}\n'
        '[cn1]\naddress = 10.0.0.11\n'
        '[cn2]\naddress = 10.0.0.12\nport = 6230\npassword = other\n')


def options(driver='ipmi', path=None) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('power_driver', driver, group='drs')
    if path is not None:
        conf.set_override('power_credentials_file', path, group='drs')
    return conf


class ReadTest(testtools.TestCase):

    def _read(self, text, mode=0o600):
        path = tempfiles.write(self, text, '.conf')
        os.chmod(path, mode)
        return credentials.read(options(path=path), 'ipmi', ipmi.REQUIRED,
                                ipmi.ALLOWED)

    def _refused(self, text, mode=0o600):
        error = self.assertRaises(ValueError, self._read, text, mode)
        message = str(error)
        self.assertTrue(message.startswith(
            'Invalid value for option [drs] power_credentials_file: '),
            message)
        self.assertNotIn(SECRET, message)
        return message

    def test_sections_inherit_default(self):
        hosts = self._read(GOOD)
        self.assertEqual(['cn1', 'cn2'], sorted(hosts))
        self.assertEqual(SECRET, hosts['cn1']['password'])  # no interpolation
        self.assertEqual('other', hosts['cn2']['password'])
        self.assertEqual('6230', hosts['cn2']['port'])
        self.assertEqual('<HostCredentials cn1: address, password, username>',
                         repr(hosts['cn1']))

    def test_group_readable_is_accepted(self):
        self.assertEqual(2, len(self._read(GOOD, 0o640)))

    def test_open_to_others_is_refused(self):
        for mode in (0o644, 0o604, 0o660, 0o601):
            message = self._refused(GOOD, mode)
            self.assertIn(f'open to other users (mode {mode:04o})', message)

    def test_missing_and_unset(self):
        error = self.assertRaises(
            ValueError, credentials.read, options(path='/nonexistent/drs'),
            'ipmi', ipmi.REQUIRED, ipmi.ALLOWED)
        self.assertIn('/nonexistent/drs: No such file or directory',
                      str(error))
        error = self.assertRaises(ValueError, credentials.read, options(),
                                  'ipmi', ipmi.REQUIRED, ipmi.ALLOWED)
        self.assertIn('required when [drs] power_driver = ipmi', str(error))

    def test_not_a_file(self):
        folder = self.useFixture(fixtures.TempDir()).path
        error = self.assertRaises(ValueError, credentials.read,
                                  options(path=folder), 'ipmi',
                                  ipmi.REQUIRED, ipmi.ALLOWED)
        self.assertIn('is not a regular file', str(error))

    def test_malformed_line_is_named_by_number_only(self):
        message = self._refused(f'[cn1]\naddress = a\npassword {SECRET}\n')
        self.assertIn('malformed line 3', message)

    def test_line_before_any_section(self):
        message = self._refused(f'password = {SECRET}\n[cn1]\n')
        self.assertIn('line 1 comes before any [host] section', message)

    def test_duplicates(self):
        self.assertIn("key 'password' appears twice in [cn1]", self._refused(
            f'[cn1]\npassword = {SECRET}\npassword = {SECRET}\n'))
        self.assertIn('section [cn1] appears twice', self._refused(
            '[cn1]\naddress = a\n[cn1]\naddress = b\n'))

    def test_keys(self):
        self.assertIn("[cn1] needs 'address'", self._refused(
            f'[cn1]\nusername = u\npassword = {SECRET}\n'))
        self.assertIn("[cn1] needs 'password'", self._refused(
            '[cn1]\naddress = a\nusername = u\npassword =\n'))
        self.assertIn("[cn2] has unknown key 'passwd' for the ipmi driver",
                      self._refused(GOOD.replace('port = 6230',
                                                 f'passwd = {SECRET}')))
        self.assertIn('has no [host] section', self._refused(
            f'[DEFAULT]\npassword = {SECRET}\n'))


class CheckTest(testtools.TestCase):
    """An unknown driver stops every command at ``conf.validate``; the
    driver's own settings stop the scheduler when it builds the driver at
    start (``loading.load``), naming the option."""

    def _validate(self, conf):
        return self.assertRaises(drs_conf.ConfigError, drs_conf.validate,
                                 conf)

    def _load(self, conf):
        return self.assertRaises(ValueError, loading.load, conf)

    def test_default_noop_needs_nothing(self):
        conf = options('noop')
        self.assertIsNone(power_driver.check(conf))
        drs_conf.validate(conf)
        driver = loading.load(conf)
        self.assertIsInstance(driver, noop.NoopDriver)
        driver.power_off('cn1')
        self.assertEqual(base.ON, driver.state('cn1'))
        self.assertEqual(0.0, driver.boot_seconds('cn1'))
        self.assertTrue(driver.manages('any'))

    def test_unknown_driver(self):
        error = self._validate(options('wol'))
        self.assertEqual(
            "Invalid value for option [drs] power_driver: 'wol' is not an "
            'installed power driver (ipmi, ironic, noop).', str(error))
        error = self.assertRaises(ValueError, loading.load, options('wol'))
        self.assertIn('[drs] power_driver', str(error))

    def test_ipmi_without_file(self):
        # nova-drs on an operator's host validates without the file.
        drs_conf.validate(options('ipmi'))
        error = self._load(options('ipmi'))
        self.assertIn('[drs] power_credentials_file: required when [drs] '
                      'power_driver = ipmi', str(error))

    def test_world_readable_file_stops_the_service(self):
        path = tempfiles.write(self, GOOD, '.conf')
        os.chmod(path, 0o644)
        error = self._load(options('ipmi', path))
        self.assertIn('[drs] power_credentials_file', str(error))
        self.assertIn('mode 0644', str(error))

    def test_good_file_loads(self):
        path = tempfiles.write(self, GOOD, '.conf')
        conf = options('ipmi', path)
        drs_conf.validate(conf)
        driver = loading.load(conf)
        self.assertIsInstance(driver, ipmi.IpmiDriver)
        self.assertTrue(driver.manages('cn2'))
        self.assertFalse(driver.manages('cn3'))
        self.assertNotIn(SECRET, repr(driver))
        self.assertNotIn(SECRET, repr(vars(driver)))


class PowerErrorTest(testtools.TestCase):

    def test_message(self):
        error = base.PowerError('cn1', 'power on failed: no answer.')
        self.assertEqual('cn1', error.host)
        self.assertEqual(
            'power management of host cn1: power on failed: no answer.',
            str(error))
