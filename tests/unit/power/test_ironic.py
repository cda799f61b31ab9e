"""The ``ironic`` driver, at the openstacksdk boundary.

No Ironic server runs in these tests: ``openstack.connect`` is replaced by
a connection whose ``baremetal`` proxy keeps nodes in memory and raises
openstacksdk's own exceptions the way the real proxy does. What they check
is ours: which calls are made, with which power targets and timeouts, the
connection settings, and the words of every failure.
"""

import fixtures
import openstack
import testtools
from openstack import exceptions as sdk_exceptions

from nova_drs_scheduler.power import base
from nova_drs_scheduler.power import ironic
from tests import tempfiles
from tests.unit.power import test_credentials

SECRET = 'k3ystone-Secret'
FILE = ('[DEFAULT]\ncloud = metal\n'
        '[cn1]\nnode = node-1\n'
        '[cn2]\nnode = node-2\n'
        '[cn3]\ncloud =\nnode = node-3\nauth_url = http://127.0.0.1:5000/v3\n'
        f'username = drs\npassword = {SECRET}\nproject_name = admin\n'
        'user_domain_name = Default\nproject_domain_name = Default\n')
CLOUDS = ('clouds:\n  metal:\n    auth:\n      auth_url: '
          'http://127.0.0.1:5000/v3\n')


_REAL_CONNECT = openstack.connect


class FakeBaremetal:
    """Nodes in memory; each state change takes effect at once unless the
    node is set to ``stuck``."""

    def __init__(self):
        self.nodes = {'node-1': 'power on', 'node-2': 'power off',
                      'node-3': 'power on'}
        self.calls = []
        self.stuck = set()
        self.failure = None

    def _node(self, node):
        if self.failure is not None:
            raise self.failure
        if node not in self.nodes:
            raise sdk_exceptions.NotFoundException(f'No node {node}')
        return node

    def set_node_power_state(self, node, target, wait=False, timeout=None):
        self.calls.append(('set', self._node(node), target, wait, timeout))
        if node not in self.stuck:
            self.nodes[node] = target.replace('soft ', '')

    def wait_for_node_power_state(self, node, expected_state, timeout=None):
        self.calls.append(('wait', self._node(node), expected_state,
                           timeout))
        if self.nodes[node] != expected_state:
            raise sdk_exceptions.ResourceTimeout(
                f'Timeout waiting for node {node}')

    def get_node(self, node, fields=None):
        self.calls.append(('get', self._node(node), fields))
        return type('Node', (), {'power_state': self.nodes[node]})()


class FakeConnection:

    def __init__(self, baremetal, settings):
        self.baremetal = baremetal
        self.settings = settings


class IronicDriverTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        clouds = tempfiles.write(self, CLOUDS, '.yaml')
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_CLIENT_CONFIG_FILE', clouds))
        self.baremetal = FakeBaremetal()
        self.connections = []

        def connect(**settings):
            connection = FakeConnection(self.baremetal, settings)
            self.connections.append(connection)
            return connection

        self.useFixture(fixtures.MonkeyPatch('openstack.connect', connect))

    def _driver(self, text=FILE, timeout=30.0):
        path = tempfiles.write(self, text, '.conf')
        conf = test_credentials.options('ironic', path)
        conf.set_override('power_timeout', timeout, group='drs')
        return ironic.IronicDriver(conf)

    def test_power_on_waits_for_the_node(self):
        driver = self._driver()
        driver.power_on('cn2')
        self.assertEqual('power on', self.baremetal.nodes['node-2'])
        (set_call, wait_call) = self.baremetal.calls
        self.assertEqual(('set', 'node-2', 'power on', False, None), set_call)
        self.assertEqual(('wait', 'node-2', 'power on'), wait_call[:3])
        self.assertLessEqual(wait_call[3], 30.0)
        self.assertGreater(wait_call[3], 25.0)

    def test_power_off_is_an_orderly_shutdown(self):
        driver = self._driver()
        driver.power_off('cn1')
        self.assertEqual([('set', 'node-1', 'soft power off', False, None)],
                         self.baremetal.calls)
        self.assertEqual(base.OFF, driver.state('cn1'))

    def test_state(self):
        driver = self._driver()
        self.assertEqual(base.ON, driver.state('cn1'))
        self.assertEqual(base.OFF, driver.state('cn2'))
        self.baremetal.nodes['node-1'] = None  # Ironic does not know yet
        self.assertEqual(base.UNKNOWN, driver.state('cn1'))
        self.assertEqual(('get', 'node-1', ['power_state']),
                         self.baremetal.calls[-1])
        self.assertIsNone(driver.boot_seconds('cn1'))

    def test_connections_per_settings(self):
        driver = self._driver()
        driver.state('cn1')
        driver.state('cn2')
        driver.state('cn3')
        self.assertEqual(2, len(self.connections))
        self.assertEqual({'cloud': 'metal', 'api_timeout': 30.0},
                         self.connections[0].settings)
        keystone = self.connections[1].settings
        self.assertEqual('http://127.0.0.1:5000/v3', keystone['auth_url'])
        self.assertEqual(SECRET, keystone['password'])
        self.assertNotIn('node', keystone)
        self.assertNotIn('cloud', keystone)
        self.assertFalse(keystone['load_yaml_config'])
        self.assertFalse(keystone['load_envvars'])

    def test_failures_are_one_clear_error(self):
        driver = self._driver(timeout=5.0)
        self.baremetal.stuck.add('node-2')
        error = self.assertRaises(base.PowerError, driver.power_on, 'cn2')
        self.assertEqual(
            'power management of host cn2: power on failed: Ironic node '
            'node-2 did not report it within 5 s ([drs] power_timeout).',
            str(error))

        self.baremetal.nodes.pop('node-1')
        error = self.assertRaises(base.PowerError, driver.power_off, 'cn1')
        self.assertEqual("power management of host cn1: power off failed: "
                         "Ironic has no node 'node-1'.", str(error))

        self.baremetal.failure = sdk_exceptions.HttpException(
            f'Unauthorized for drs with {SECRET}')
        error = self.assertRaises(base.PowerError, driver.state, 'cn3')
        self.assertIn('power state failed for Ironic node node-3', str(error))
        self.assertNotIn(SECRET, str(error))
        self.assertNotIn(SECRET, repr(error))

        error = self.assertRaises(base.PowerError, driver.state, 'cn9')
        self.assertIn('has no [cn9] section', str(error))
        self.assertFalse(driver.manages('cn9'))
        self.assertNotIn(SECRET, repr(driver))

    def test_settings_are_checked_at_start(self):
        error = self.assertRaises(ValueError, self._driver,
                                  '[cn1]\nnode = n\ncloud = nowhere\n')
        self.assertIn("[cn1] names cloud 'nowhere', which no clouds.yaml "
                      'defines (found: metal)', str(error))
        error = self.assertRaises(ValueError, self._driver,
                                  '[cn1]\nnode = n\n')
        self.assertIn('[cn1] needs either cloud', str(error))
        error = self.assertRaises(
            ValueError, self._driver,
            '[cn1]\nnode = n\ncloud = metal\nauth_url = http://x\n')
        self.assertIn('not both', str(error))
        error = self.assertRaises(ValueError, self._driver,
                                  '[cn1]\ncloud = metal\n')
        self.assertIn("[cn1] needs 'node'", str(error))
        self.assertTrue(str(error).startswith(
            'Invalid value for option [drs] power_credentials_file'))

    def test_real_connect_builds_a_lazy_connection(self):
        # The real openstack.connect, without a server: nothing is
        # contacted until a call, and the timeout reaches the session.
        self.useFixture(fixtures.MonkeyPatch('openstack.connect',
                                             _REAL_CONNECT))
        driver = self._driver(timeout=7.0)
        for host, cloud in (('cn1', 'metal'), ('cn3', 'defaults')):
            connection = driver._connection(driver._hosts[host])
            self.assertEqual(7.0, connection.config.get_session().timeout)
            self.assertEqual(cloud, connection.config.name)
        self.assertEqual(SECRET,
                         connection.config.config['auth']['password'])
