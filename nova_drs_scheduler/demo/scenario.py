"""What the demo cloud looks like and how loaded its VMs are over time.

The load is a :class:`~nova_drs_scheduler.simulate.traces.Trace` (percent
of each VM's own vCPUs, per period), the same type the simulator replays,
so ``--trace`` accepts any trace file the simulator does.
"""

import dataclasses
import random

from nova_drs_scheduler.simulate import traces

#: Two aggregates (DRS pools) and a few hosts in none.
POOLS = {
    'pool-a': ('host1', 'host2', 'host3', 'host4'),
    'pool-b': ('host5', 'host6', 'host7', 'host8'),
}
UNAGGREGATED = ('host9', 'host10')
HOSTS = tuple(h for hosts in POOLS.values() for h in hosts) + UNAGGREGATED
SERVERS_PER_HOST = 4
SERVER_VCPUS = 2
#: MediumFakeDriver's size.
HOST_VCPUS = 10


@dataclasses.dataclass(frozen=True)
class Event:
    """Hosts whose VMs run at ``percent`` from ``start`` to ``stop``."""

    hosts: tuple
    start: int
    stop: int
    percent: float
    what: str


#: The bundled story: one sustained overload per pool and among the
#: unaggregated hosts, and a spike too short to act on.
EVENTS = (
    Event(('host2',), 3, 30, 100.0, 'host2 (pool-a) overloaded for good'),
    Event(('host6',), 5, 6, 100.0, 'host6 (pool-b): a one-period spike'),
    Event(('host7',), 9, 30, 95.0, 'host7 (pool-b) overloaded for good'),
    Event(('host9',), 12, 30, 100.0, 'host9 (no aggregate) overloaded'),
)
PERIODS = 20


def placement() -> dict:
    """Initial host of each server name: four per host, in host order."""
    return {f'vm-{h}-{i}': host for h, host in enumerate(HOSTS)
            for i in range(SERVERS_PER_HOST)}


def bundled(periods: int = PERIODS, seed: int = 7) -> traces.Trace:
    """Quiet VMs (10-30 % each) plus the events above, reproducible."""
    rng = random.Random(seed)
    servers = placement()
    names = tuple(servers)
    base = {name: rng.uniform(10.0, 30.0) for name in names}
    steps = []
    for period in range(periods):
        row = []
        for name in names:
            value = base[name] + rng.uniform(-3.0, 3.0)
            for event in EVENTS:
                if servers[name] in event.hosts and \
                        event.start <= period < event.stop:
                    value = event.percent
            row.append(round(max(0.0, min(100.0, value)), 1))
        steps.append(tuple(row))
    return traces.Trace(names=names, steps=tuple(steps), step_seconds=60)


def from_trace(trace: traces.Trace, scale: float) -> traces.Trace:
    """Map a trace's first VMs onto the demo's servers, scaled."""
    names = tuple(placement())
    if len(trace.names) < len(names):
        raise traces.TraceError(
            f'the demo needs {len(names)} VMs; the trace has '
            f'{len(trace.names)}')
    steps = tuple(tuple(min(100.0, value * scale)
                        for value in step[:len(names)])
                  for step in trace.steps)
    return traces.Trace(names=names, steps=steps,
                        step_seconds=trace.step_seconds)
