"""Hosts' power states over a simulated run, and the energy they draw.

A host is ``on``, ``entering`` standby (its compute service disabled while
its instances are drained off, as a host in maintenance is), in
``standby`` (powered off once empty: it takes no instance and holds no
load), or ``waking`` (powered on, booting until its ``nova-compute``
reports up ``boot_seconds`` later; then it is ``on`` and enabled again).
The states are those of :mod:`nova_drs_scheduler.planning.model`; a
strategy moves hosts between them through :class:`Hosts` (ours through
``planning.power.plan``'s actions, Watcher's through the service-state
actions of ``vm_workload_consolidation``).

Energy follows the linear server power model of published SPECpower_ssj2008
results (Fan, Weber and Barroso, *Power provisioning for a warehouse-sized
computer*, ISCA 2007): a host on draws its idle power plus the span to its
peak power in proportion to its CPU utilization (capped at 100 %); a host
in standby draws its soft-off power (the BMC and the power supplies' standby
rail); a booting host draws its idle power.  Each period's power is held for
the period.
"""

import dataclasses

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import maintenance

#: Joules in a kilowatt-hour.
JOULES_PER_KWH = 3.6e6
#: States in which a host holds no instance and serves no load.
OFF = frozenset((model.STANDBY, model.WAKING))


@dataclasses.dataclass(frozen=True)
class PowerModel:
    """One host's power draw, and how long it takes to come back.

    Defaults are those of a current two-socket rack server in
    SPECpower_ssj2008 results (about 100 W at active idle, 350 W at full
    load) and its soft-off draw (about 10 W); ``boot_seconds`` is ``[drs]
    power_boot_seconds``'s default, power-on to ``nova-compute`` up.
    """

    idle_watts: float = 100.0
    peak_watts: float = 350.0
    standby_watts: float = 10.0
    boot_seconds: float = 600.0

    def __post_init__(self):
        if not 0 <= self.standby_watts <= self.idle_watts <= self.peak_watts:
            raise ValueError('the power model needs 0 <= standby watts <= '
                             'idle watts <= peak watts')
        if self.boot_seconds < 0:
            raise ValueError('the boot time must not be negative')

    def watts(self, state: str, cpu_percent: float) -> float:
        """What a host in ``state`` at ``cpu_percent`` draws."""
        if state == model.STANDBY:
            return self.standby_watts
        if state == model.WAKING:
            return self.idle_watts
        used = min(max(cpu_percent, 0.0), 100.0) / 100.0
        return self.idle_watts + (self.peak_watts - self.idle_watts) * used


class Hosts:
    """Every host's power state on one cluster, and the run's energy.

    The engine calls :meth:`advance` at the start of every period, after
    the migrations that ended have completed, :meth:`account` once the
    period's CPU is measured, and :meth:`migrated` for every migration it
    starts.  A host out of service (entering, standby,
    waking) is in the cluster's ``disabled`` set, so that Nova's
    ComputeFilter (and so every strategy's move) leaves it out.
    """

    def __init__(self, power: PowerModel, cluster, cpu_threshold: float):
        self.model = power
        self.cluster = cluster
        self.cpu_threshold = cpu_threshold
        self.state = dict.fromkeys(cluster.hosts, model.ON)
        #: One drain per standby decision (``maintenance.Drain``): from
        #: the decision to the host empty, if it ever was.
        self.drains = []
        #: {host entering standby: its drain}
        self._draining = {}
        #: {waking host: when its nova-compute reports up}
        self.ready_at = {}
        #: {host: when it was last powered on from standby}
        self.woken_at = {}
        self.joules = 0.0
        self.on_seconds = 0.0
        #: Periods the pool's demand was over its threshold (on the
        #: capacity of the hosts serving) while a host was off or booting.
        self.short_periods = 0
        #: (kind, host, seconds into the run) of every transition asked.
        self.events = []

    @property
    def entering(self) -> dict:
        """{host entering standby: when it entered}."""
        return {host: d.entered for host, d in self._draining.items()}

    def off(self) -> frozenset:
        """The hosts that hold no instance and report no metrics."""
        return frozenset(h for h, s in self.state.items() if s in OFF)

    def standby(self, host: str, now: float) -> bool:
        """Disable ``host`` and drain it for standby; False unless on."""
        if self.state[host] != model.ON:
            return False
        self.state[host] = model.ENTERING
        self._draining[host] = maintenance.Drain(host, now)
        self.drains.append(self._draining[host])
        self.cluster.disabled.add(host)
        self.events.append(('standby', host, now))
        return True

    def cancel(self, host: str, now: float) -> bool:
        """Give a host entering standby back to the pool; False unless
        entering."""
        if self.state[host] != model.ENTERING:
            return False
        self.state[host] = model.ON
        del self._draining[host]
        self.cluster.disabled.discard(host)
        self.events.append(('cancel', host, now))
        return True

    def wake(self, host: str, now: float) -> bool:
        """Power a standby host on; it serves ``boot_seconds`` later.
        False unless in standby."""
        if self.state[host] != model.STANDBY:
            return False
        self.state[host] = model.WAKING
        self.ready_at[host] = now + self.model.boot_seconds
        self.woken_at[host] = now
        self.events.append(('wake', host, now))
        return True

    def migrated(self, migration) -> None:
        """A migration started: a standby drain's if it leaves a host
        entering standby."""
        drain = self._draining.get(migration.source)
        if drain is not None:
            drain.sent(migration)

    def advance(self, now: float, ended) -> None:
        """Hosts entering standby that are empty power off (``ended``: the
        migrations that completed since the last period); waking hosts
        whose boot is over are enabled."""
        for host, drain in sorted(self._draining.items()):
            drain.departed(ended)
            if drain.check_empty(self.cluster):
                del self._draining[host]
                self.state[host] = model.STANDBY
        for host, ready in sorted(self.ready_at.items()):
            if now >= ready:
                del self.ready_at[host]
                self.state[host] = model.ON
                self.cluster.disabled.discard(host)

    def account(self, host_percent: dict, interval: float) -> None:
        """One period: every host's energy at its measured CPU, its time
        on, and whether the pool ran short while a host was off."""
        watts, serving, off = self.model.watts, [], False
        for host, state in self.state.items():
            self.joules += watts(state, host_percent[host]) * interval
            if state != model.STANDBY:
                self.on_seconds += interval
            if state in OFF:
                off = True
            else:
                serving.append(host)
        if off and serving:
            demand = sum(host_percent[h] for h in serving) / len(serving)
            if demand > self.cpu_threshold:
                self.short_periods += 1

    def summary(self) -> dict:
        """The run's energy figures."""
        return {
            'energy_kwh': round(self.joules / JOULES_PER_KWH, 2),
            'host_hours_on': round(self.on_seconds / 3600.0, 1),
            'short_periods': self.short_periods,
            'standbys': sum(1 for e in self.events if e[0] == 'standby'),
            'wakes': sum(1 for e in self.events if e[0] == 'wake'),
            'cancels': sum(1 for e in self.events if e[0] == 'cancel'),
            'standby_drain_seconds': [round(d.drain_seconds, 1)
                                      for d in self.drains
                                      if d.drain_seconds is not None],
        }

