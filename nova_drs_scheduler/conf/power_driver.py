"""``[drs] power_driver`` and its credentials: how hosts are switched.

When to switch a host is ``conf/power.py``'s; this module only says
through what. The drivers live in ``nova_drs_scheduler.power``, found by
name through entry points, so this module imports none of them.
"""

from importlib import metadata

from oslo_config import cfg

from nova_drs_scheduler.conf import utilization

#: The entry point namespace of power drivers.
NAMESPACE = 'nova_drs_scheduler.power_drivers'

OPTS = [
    cfg.StrOpt(
        'power_driver',
        default='noop',
        help='How power management switches a compute host\'s machine on '
             'and off: the name of a driver in the '
             f'``{NAMESPACE}`` entry point namespace. ``noop`` '
             'only disables the host\'s compute service for standby and '
             'enables it to wake it; the machine stays on. ``ipmi`` '
             'powers it through its BMC (IPMI over LAN); ``ironic`` '
             'through its Ironic node. ``ipmi`` and ``ironic`` read each '
             'host\'s BMC or node from ``power_credentials_file``. An '
             'unknown name, or a driver that refuses its settings, stops '
             'the service at start.'),
    cfg.StrOpt(
        'power_credentials_file',
        help='INI file with one section per compute host (its name as '
             'Nova knows it) holding what the power driver needs: for '
             '``ipmi``, ``address``, ``port`` (623 unless set), '
             '``username`` and ``password`` of its BMC; for ``ironic``, '
             '``node`` and either ``cloud`` (a cloud of clouds.yaml) or '
             '``auth_url`` with Keystone credentials. ``[DEFAULT]`` holds '
             'values shared by every host. Read once at start. It must be '
             'closed to other users (mode 0600, or 0640 with the '
             'scheduler\'s group) or the service does not start; its '
             'values never appear in logs, errors or decision records.'),
    cfg.FloatOpt(
        'power_timeout',
        default=60.0,
        min=1.0,
        max=3600.0,
        help='Seconds one power call may take (logging in to the BMC or '
             'Ironic, the request and, for power-on, seeing the machine '
             'on) before it fails with one error naming the host.'),
]


def check(conf) -> str | None:
    """Why ``[drs] power_driver`` names no installed driver, or None.

    The driver's own settings (the credentials file's presence,
    permissions, format and keys) are checked when the scheduler builds
    it at start (``rebalance.standby``), not here: ``nova-drs`` validates
    the same options on hosts that must not hold the credentials.
    """
    name = conf.drs.power_driver
    found = {ep.name for ep in metadata.entry_points(group=NAMESPACE)}
    if name not in found:
        return (f'Invalid value for option [drs] power_driver: {name!r} is '
                f'not an installed power driver '
                f'({", ".join(sorted(found))}).')
    return None


def list_opts():
    return {utilization.drs_group: OPTS}
