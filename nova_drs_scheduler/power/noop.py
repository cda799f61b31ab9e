"""``noop``: power management without switching any machine.

Standby only disables the host's compute service (the rebalancer does
that for every driver) and wake enables it again, so the machine stays on:
a way to try power management's decisions, or to use them with an
out-of-band tool.
"""

from nova_drs_scheduler.power import base


class NoopDriver(base.PowerDriver):
    """Leaves every machine on."""

    def power_on(self, host: str) -> None:
        """Nothing to do: the machine never went off."""

    def power_off(self, host: str) -> None:
        """Nothing to do: the machine stays on."""

    def state(self, host: str) -> str:
        return base.ON

    def boot_seconds(self, host: str) -> float | None:
        # Nothing boots: a woken host's nova-compute has been up all along.
        return 0.0
