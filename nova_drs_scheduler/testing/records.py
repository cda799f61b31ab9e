"""Reading decision records (one per rebalance period).

The schema is documented in doc/testing.md; records are plain JSON-ready
dicts built by :mod:`nova_drs_scheduler.rebalance.record`.  Pure
functions: they work as well on a record from ``nova-drs history`` or a
history file as on one a test just produced.
"""

#: A move's outcome statuses after which it never changes again.
FINAL = frozenset(('completed', 'failed', 'timed_out', 'unknown'))
#: Outcomes of moves that were never started (nothing will change).
NOT_STARTED = frozenset(('planned', 'recommended', 'dry-run'))


def verdict(record: dict, host: str) -> dict:
    """The period's verdict on ``host`` (an entry of ``hosts[]``)."""
    for entry in record['hosts']:
        if entry['host'] == host:
            return entry
    raise KeyError(f'no verdict on host {host!r} in record {record["id"]}')


def violated_hosts(record: dict) -> list[str]:
    """Hosts judged over a threshold for long enough, in record order."""
    return [entry['host'] for entry in record['hosts'] if entry['violated']]


def move(record: dict, instance: str) -> dict:
    """The record's move of ``instance``."""
    for entry in record['moves']:
        if entry['instance'] == instance:
            return entry
    raise KeyError(f'no move of {instance!r} in record {record["id"]}')


def moves_with_status(record: dict, status: str) -> list[dict]:
    """The moves whose current outcome has this status."""
    return [entry for entry in record['moves']
            if outcome(entry)['status'] == status]


def outcome(move_entry: dict) -> dict:
    """A move's latest outcome: ``{'status': ..., ...}``."""
    return move_entry.get('outcome') or {'status': 'planned'}


def is_final(move_entry: dict) -> bool:
    """True once the move's outcome can no longer change."""
    status = outcome(move_entry)['status']
    return status in FINAL or status in NOT_STARTED


def rejection(move_entry: dict, subject: str) -> dict:
    """Why ``subject`` (a host, or an instance uuid) was ruled out."""
    for entry in move_entry['rejected']:
        if entry['subject'] == subject:
            return entry
    raise KeyError(f'{subject!r} was not rejected for the move of '
                   f'{move_entry["instance"]}')
