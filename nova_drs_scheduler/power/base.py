"""The interface every power driver implements.

A driver turns a compute host's machine on and off for power management
(``[drs] power_driver``). It is built once at start with the service's
config; bad config (an unreadable credentials file, a host section missing
its address) raises :class:`ValueError` from the constructor with the
option's name, which stops the service before it plans anything.
"""

import abc

#: What :meth:`PowerDriver.state` answers.
ON = 'on'
OFF = 'off'
UNKNOWN = 'unknown'


class PowerError(Exception):
    """One power call failed; the message says why, never with a secret."""

    def __init__(self, host: str, message: str):
        super().__init__(host, message)
        self.host = host
        self.message = message

    def __str__(self) -> str:
        return f'power management of host {self.host}: {self.message}'


class PowerDriver(abc.ABC):
    """Turns compute hosts' machines on and off.

    Every call either succeeds or raises :class:`PowerError` within
    ``[drs] power_timeout`` seconds, so a dead BMC costs one period at
    most and never leaves the caller unsure whether the call returned.
    """

    def __init__(self, conf):
        self.conf = conf

    def manages(self, host: str) -> bool:
        """Whether this driver can switch ``host`` (e.g. it has its BMC).

        The rebalancer chooses standby hosts among those only, so that no
        host is emptied for a power-off that cannot happen.
        """
        return True

    @abc.abstractmethod
    def power_on(self, host: str) -> None:
        """Switch the machine on; return once it is reported on."""

    @abc.abstractmethod
    def power_off(self, host: str) -> None:
        """Ask for an orderly shutdown; return once it is accepted.

        The operating system then takes its time to stop; :meth:`state`
        reads ``off`` once it has.
        """

    @abc.abstractmethod
    def state(self, host: str) -> str:
        """:data:`ON`, :data:`OFF`, or :data:`UNKNOWN` when the driver has
        no way to tell."""

    def boot_seconds(self, host: str) -> float | None:
        """Seconds from power-on to a working ``nova-compute``, or None
        when this driver cannot measure it (``[drs] power_boot_seconds``
        applies then)."""
        return None
