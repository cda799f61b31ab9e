"""What recent migrations imply for the next rebalance period.

One rule for the live executor, which reads Nova's migration records, and
for the simulator, which replays its own: no I/O and no Nova import here.
"""

import dataclasses
from collections.abc import Iterable

#: Phases of a move, whatever its source calls its statuses.
IN_FLIGHT = 'in-flight'
DONE = 'done'
FAILED = 'failed'
#: What blocks an instance besides a move in flight (``MigrationState.kinds``).
COOLDOWN = 'cooldown'
QUARANTINE = 'quarantine'


@dataclasses.dataclass(frozen=True)
class Move:
    """One migration record, as the rule needs it."""

    instance: str
    #: IN_FLIGHT, DONE, FAILED, or anything else (ignored).
    phase: str
    source: str | None
    destination: str | None
    #: Seconds since the record last changed.
    age: float
    #: Started by DRS (only DRS's own failures are quarantined).
    by_drs: bool
    #: The record's id, for messages.
    ident: str = ''


@dataclasses.dataclass
class MigrationState:
    """What recent migrations imply for this period."""

    #: {instance uuid: why it may not move now}
    blocked: dict
    #: {host: migrations in flight with the host as source or destination}
    inflight_by_host: dict
    inflight_total: int
    #: {instance uuid: hosts it left by a completed migration within the
    #: no-return time}
    left: dict = dataclasses.field(default_factory=dict)
    #: {instance uuid: IN_FLIGHT, COOLDOWN or QUARANTINE}, for each of
    #: ``blocked``: a drain waits for a move in flight, ignores a cooldown
    #: and reports a quarantine.
    kinds: dict = dataclasses.field(default_factory=dict)


def _in_flight_reason(move: Move) -> str:
    where = f'migrating {move.source} -> {move.destination}'
    return f'{where} (migration {move.ident})' if move.ident else where


def migration_state(moves: Iterable[Move], cooldown: float,
                    quarantine: float, no_return: float) -> MigrationState:
    """Blocked instances and in-flight counts. An instance is blocked if
    any of its records blocks it (a DRS failure stays quarantined after a
    later move ends); the newest such record gives the reason.

    - in flight (any initiator): blocked, and counts against both hosts'
      concurrency limits;
    - completed within ``cooldown`` seconds (any initiator): ``cooldown``,
      so no instance bounces back to the host it just left;
    - failed within ``quarantine`` seconds, started by DRS: ``quarantine``;
    - completed within ``no_return`` seconds: its source is in ``left``.
    """
    blocked = {}
    kinds = {}
    by_host = {}
    total = 0
    left = {}
    for move in sorted(moves, key=lambda m: m.age):
        uuid = move.instance
        if move.phase == DONE and move.age < no_return and move.source:
            left.setdefault(uuid, set()).add(move.source)
        if move.phase == IN_FLIGHT:
            total += 1
            for host in {move.source, move.destination}:
                if host:
                    by_host[host] = by_host.get(host, 0) + 1
            blocked[uuid] = _in_flight_reason(move)
            kinds[uuid] = IN_FLIGHT
        elif uuid in blocked:
            continue
        elif move.phase == DONE and move.age < cooldown:
            kinds[uuid] = COOLDOWN
            blocked[uuid] = (
                f'cooldown: moved {move.source} -> {move.destination} '
                f'{int(move.age)}s ago (cooldown {int(cooldown)}s)')
        elif move.phase == FAILED and move.age < quarantine and move.by_drs:
            kinds[uuid] = QUARANTINE
            blocked[uuid] = (
                f'quarantine: migration {move.ident} to {move.destination} '
                f'failed {int(move.age)}s ago (quarantine '
                f'{int(quarantine)}s)')
    return MigrationState(blocked, by_host, total,
                          {uuid: tuple(sorted(hosts))
                           for uuid, hosts in left.items()}, kinds)
