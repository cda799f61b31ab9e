"""The driver ``[drs] power_driver`` names, through stevedore.

A third-party package adds a driver by registering a
:class:`~.base.PowerDriver` subclass under the
``nova_drs_scheduler.power_drivers`` entry point namespace
(``doc/extending.md``).
"""

from stevedore import driver
from stevedore import exception

from nova_drs_scheduler.conf import power_driver as options
from nova_drs_scheduler.power import base


def load(conf) -> base.PowerDriver:
    """The driver named by ``[drs] power_driver``, built with ``conf``.

    Raises ValueError naming the option when no driver has that name or
    the driver refuses its config (e.g. its credentials file).
    """
    name = conf.drs.power_driver
    try:
        return driver.DriverManager(
            options.NAMESPACE, name, invoke_on_load=True, invoke_args=(conf,),
            on_load_failure_callback=_raise).driver
    except exception.NoMatches:
        raise ValueError(f'Invalid value for option [drs] power_driver: no '
                         f'power driver named {name!r} is installed '
                         f'(namespace {options.NAMESPACE}).') from None


def _raise(_manager, _entrypoint, exc):
    """A driver that fails to import or to build stops the service with
    its own error, not as "no driver named ..."."""
    raise exc
