"""``ironic``: bare-metal node power through openstacksdk.

For compute hosts enrolled in Ironic (e.g. by Bifrost or Metal3) for
their power only. Each host's section names its ``node`` (name or UUID)
and how to reach Ironic: ``cloud``, a cloud of ``clouds.yaml``, or
``auth_url`` with a user and project in the file itself. Hosts that share
the same settings share one connection.
"""

import time

import openstack
import openstack.config
from keystoneauth1 import exceptions as ks_exceptions
from openstack import exceptions as sdk_exceptions

from nova_drs_scheduler.power import base
from nova_drs_scheduler.power import credentials

#: Keystone password authentication, for a section without ``cloud``.
AUTH = frozenset({'auth_url', 'username', 'password', 'project_name',
                  'user_domain_name', 'project_domain_name', 'region_name',
                  'cacert'})
REQUIRED = frozenset({'node'})
ALLOWED = REQUIRED | {'cloud'} | AUTH

_STATES = {'power on': base.ON, 'power off': base.OFF}


class IronicDriver(base.PowerDriver):
    """Powers hosts through their Ironic nodes."""

    def __init__(self, conf):
        super().__init__(conf)
        self._timeout = conf.drs.power_timeout
        self._hosts = credentials.read(conf, 'ironic', REQUIRED, ALLOWED)
        path = conf.drs.power_credentials_file
        clouds = None
        for host, found in self._hosts.items():
            if bool(found.get('cloud')) == bool(found.get('auth_url')):
                raise ValueError(
                    f'Invalid value for option [drs] power_credentials_file: '
                    f'{path}: [{host}] needs either cloud (a cloud of '
                    f'clouds.yaml) or auth_url, not both.')
            if found.get('cloud'):
                if clouds is None:
                    clouds = openstack.config.OpenStackConfig(
                    ).get_cloud_names()
                if found['cloud'] not in clouds:
                    raise ValueError(
                        f'Invalid value for option [drs] '
                        f'power_credentials_file: {path}: [{host}] names '
                        f'cloud {found["cloud"]!r}, which no clouds.yaml '
                        f'defines (found: {", ".join(clouds) or "none"}).')
        self._connections = {}

    def __repr__(self) -> str:
        return f'<IronicDriver hosts={sorted(self._hosts)}>'

    def manages(self, host: str) -> bool:
        return host in self._hosts

    def power_on(self, host: str) -> None:
        deadline = time.monotonic() + self._timeout

        def on(baremetal, node):
            baremetal.set_node_power_state(node, 'power on')
            baremetal.wait_for_node_power_state(
                node, 'power on',
                timeout=max(1.0, deadline - time.monotonic()))

        self._call(host, 'power on', on)

    def power_off(self, host: str) -> None:
        # An orderly shutdown of the OS; Ironic reports the node off once
        # it is done.
        self._call(host, 'power off', lambda baremetal, node:
                   baremetal.set_node_power_state(node, 'soft power off'))

    def state(self, host: str) -> str:
        def read(baremetal, node):
            found = baremetal.get_node(node, fields=['power_state'])
            return _STATES.get(found.power_state, base.UNKNOWN)

        return self._call(host, 'power state', read)

    def _call(self, host: str, verb: str, action):
        found = credentials.of(self.conf, self._hosts, host, verb)
        node = found['node']
        try:
            return action(self._connection(found).baremetal, node)
        except sdk_exceptions.ResourceTimeout:
            raise base.PowerError(
                host, f'{verb} failed: Ironic node {node} did not report '
                      f'it within {self._timeout:g} s ([drs] '
                      f'power_timeout).') from None
        except sdk_exceptions.NotFoundException:
            raise base.PowerError(
                host, f'{verb} failed: Ironic has no node {node!r}.'
            ) from None
        except (sdk_exceptions.SDKException,
                ks_exceptions.ClientException) as exc:
            raise base.PowerError(
                host, f'{verb} failed for Ironic node {node}: '
                      f'{credentials.scrub(str(exc), found)}') from None

    def _connection(self, found):
        settings = tuple(sorted((key, value) for key, value in found.items()
                                if key != 'node' and value))
        connection = self._connections.get(settings)
        if connection is None:
            given = dict(settings)
            if 'cloud' not in given:
                # The file's settings alone: no clouds.yaml or OS_*
                # variables merged in behind the operator's back.
                given.update(load_yaml_config=False, load_envvars=False)
            connection = openstack.connect(api_timeout=self._timeout,
                                           **given)
            self._connections[settings] = connection
        return connection
