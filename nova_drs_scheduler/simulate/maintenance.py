"""Hosts in maintenance over a simulated run, and what their drains cost.

A :class:`Schedule` puts hosts into maintenance one at a time, in order:
the first at ``start``; each one is drained (its compute service disabled,
so Nova's filters and the planner's snapshot leave it out), then kept for
``work_time`` seconds of work (patching, a reboot) once it is empty, then
brought back into service, empty, and the next one starts.  That is an
operator's rolling upgrade; one host with no ``work_time`` is a host taken
out for good.

The work starts when the host is empty or, at the latest, ``deadline``
seconds after it entered: an operator's maintenance window does not wait
for ever.  Instances still on it then are *left behind*; so are those on a
host still draining when the run ends.
"""

import dataclasses
import math

from nova_drs_scheduler.planning import benefit


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Which hosts go into maintenance, from when, and for how long."""

    #: In order; empty: every host of the cluster, by name.
    hosts: tuple = ()
    #: Seconds into the run when the first host enters maintenance.
    start: float = 0.0
    #: Seconds a host stays in maintenance once its work started; None:
    #: it never comes back (and no other host follows it).
    work_time: float | None = 1800.0
    #: Seconds after entering when the work starts, empty or not.
    deadline: float = 3600.0

    def __post_init__(self):
        if self.start < 0 or self.deadline <= 0:
            raise ValueError('a maintenance start must not be negative and '
                             'its deadline must be positive')
        if self.work_time is not None and self.work_time < 0:
            raise ValueError('a maintenance work time must not be negative')


def drain(host: str, at: float, deadline: float = 3600.0) -> Schedule:
    """One host taken out at ``at`` seconds and kept out."""
    return Schedule((host,), at, None, deadline)


def rolling(start: float, work_time: float = 1800.0,
            deadline: float = 3600.0) -> Schedule:
    """Every host in turn, from ``start``: an upgrade of the cluster."""
    return Schedule((), start, work_time, deadline)


@dataclasses.dataclass
class Drain:
    """One host's drain (maintenance, or standby), as it went (times in
    seconds of the run)."""

    host: str
    entered: float
    #: When its last instance left (the end of that migration).
    emptied: float | None = None
    work_started: float | None = None
    returned: float | None = None
    #: Migrations off it started while it was draining, and RAM.
    migrations: int = 0
    moved_mb: int = 0
    #: Instances still on it (one migrating off it included) when the
    #: work started, or at the end of the run if its work had not started.
    left_behind: int = 0
    #: The end of the last migration off it so far.
    last_departure: float | None = None

    @property
    def drain_seconds(self) -> float | None:
        """From entering maintenance to empty; None if it never was."""
        return None if self.emptied is None else self.emptied - self.entered

    def sent(self, migration) -> None:
        """A migration off the host started."""
        self.migrations += 1
        self.moved_mb += migration.memory_mb

    def departed(self, ended) -> None:
        """Migrations ended: those off the host mark its last departure."""
        for migration in ended:
            if migration.source == self.host:
                self.last_departure = max(self.last_departure or 0.0,
                                          migration.end)

    def check_empty(self, cluster) -> bool:
        """Whether the host is empty (:func:`empty`); the first time it
        is, it was emptied by its last departure (or at once)."""
        emptied = empty(cluster, self.host)
        if emptied and self.emptied is None:
            self.emptied = (self.entered if self.last_departure is None
                            else self.last_departure)
        return emptied


class Tracker:
    """A schedule played on one cluster: who is in maintenance now.

    The engine calls :meth:`advance` at the start of every period, after
    the migrations that ended have completed, and :meth:`migrated` for
    every migration it starts.
    """

    def __init__(self, schedule: Schedule, cluster):
        self.schedule = schedule
        self.cluster = cluster
        self._queue = list(schedule.hosts or cluster.hosts)
        self._next = schedule.start
        self.current: Drain | None = None
        self.drains: list = []

    @property
    def hosts(self) -> dict:
        """{host in maintenance: when it entered}."""
        current = self.current
        return {current.host: current.entered} if current else {}

    @property
    def queued(self) -> frozenset:
        """The hosts still to be drained after the current one."""
        return frozenset(self._queue)

    def advance(self, now: float, ended) -> None:
        """Move the schedule on to ``now``; ``ended``: the migrations that
        completed since the last period."""
        if self.current is not None:
            self.current.departed(ended)
            self._progress(now)
        if self.current is None and self._queue and now >= self._next:
            host = self._queue.pop(0)
            self.cluster.disabled.add(host)
            self.current = Drain(host, now)
            self.drains.append(self.current)
            self._progress(now)

    def _progress(self, now: float) -> None:
        current, schedule, cluster = self.current, self.schedule, self.cluster
        emptied = current.check_empty(cluster)
        if current.work_started is None and (
                emptied or now - current.entered >= schedule.deadline):
            current.work_started = now
            current.left_behind = len(cluster.instances_on(current.host))
        if (current.work_started is not None
                and schedule.work_time is not None
                and now >= current.work_started + schedule.work_time):
            current.returned = now
            cluster.disabled.discard(current.host)
            self.current = None
            self._next = now

    def migrated(self, migration) -> None:
        """A migration started: a drain's if it leaves the current host."""
        if self.current is not None \
                and migration.source == self.current.host:
            self.current.sent(migration)

    def finish(self) -> list:
        """The drains, once the run is over; a drain still under way
        leaves behind what is on its host."""
        current = self.current
        if current is not None and current.work_started is None:
            current.left_behind = len(
                self.cluster.instances_on(current.host))
        return self.drains


def empty(cluster, host: str) -> bool:
    """Nothing is on ``host`` nor on its way to it (a move that started
    before it was disabled may still land on it): a drain is over."""
    return not cluster.residents[host] and not any(
        m.destination == host for m in cluster.inflight.values())


def drain_minutes(seconds: list) -> tuple:
    """The mean and the longest of drain times, in minutes; (None, None)
    for none."""
    if not seconds:
        return None, None
    return (round(sum(seconds) / len(seconds) / 60, 1),
            round(max(seconds) / 60, 1))


def link_seconds(drain: Drain, bandwidth_mbps: float) -> float:
    """The fastest the drain could have been: its RAM moved over one link
    at full bandwidth, nothing re-dirtied."""
    return drain.moved_mb * benefit.MBIT_PER_MIB / bandwidth_mbps


def summary(drains, overloaded_series, interval: int,
            bandwidth_mbps: float) -> dict:
    """One run's maintenance figures: the drains (``drain_seconds`` and
    ``link_seconds`` per emptied host), and the overloaded host-periods
    measured while a host was draining (from entering to its work's start,
    or the run's end)."""
    windows = [(d.entered, math.inf if d.work_started is None
                else d.work_started) for d in drains]
    emptied = [d for d in drains if d.drain_seconds is not None]
    return {
        'hosts_drained': len(drains),
        'hosts_emptied': len(emptied),
        'hosts_returned': sum(1 for d in drains if d.returned is not None),
        'drain_seconds': [round(d.drain_seconds, 1) for d in emptied],
        'link_seconds': [round(link_seconds(d, bandwidth_mbps), 1)
                         for d in emptied],
        'drain_migrations': sum(d.migrations for d in drains),
        'drain_gb': round(sum(d.moved_mb for d in drains) / 1024.0, 1),
        'left_behind': sum(d.left_behind for d in drains),
        'overloaded_while_draining': sum(
            count for period, count in enumerate(overloaded_series)
            if any(start <= period * interval < end
                   for start, end in windows)),
    }
