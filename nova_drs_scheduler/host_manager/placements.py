"""What this scheduler placed on each compute node since its row was read.

Stock Nova re-reads the rows at each request, so it sees the instances the
computes claimed since the previous one.  Cached rows do not, so the host
manager keeps here the counters ``consume_from_request`` changed and adds
them to every later request's HostState, until a refresh brings a
different row for that node: the database then wins, so nothing is counted
twice.
"""

import dataclasses
import threading

from nova_drs_scheduler.host_manager import snapshot as snapshot_mod
from nova_drs_scheduler.host_manager import state

#: Seconds after which a placement is forgotten although the node's row has
#: not changed: the compute claims an instance (and rewrites its row) within
#: seconds, so a row unchanged this long after shows a build that never
#: happened, which stock Nova does not count either.
PLACED_MAX_AGE = 120.0


@dataclasses.dataclass(frozen=True)
class Placed:
    """Resources this scheduler consumed on a node, against one row."""

    node: snapshot_mod.NodeEntry
    at: float
    consumption: state.Consumption


def _same_row(a: snapshot_mod.NodeEntry, b: snapshot_mod.NodeEntry) -> bool:
    # An entry parsed by a request (values None) stands for no stored row.
    return a is b or (a.values is not None and a.values == b.values)


class Placements:
    """Compute node uuid -> what this scheduler placed there lately;
    requests of several threads share it."""

    def __init__(self) -> None:
        self._placed: dict[str, list[Placed]] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._placed = {}

    def remember(self, node: snapshot_mod.NodeEntry, at: float,
                 consumption: state.Consumption) -> None:
        """Keep what a request consumed for the requests that follow."""
        placed = Placed(node, at, consumption)
        with self._lock:
            self._placed.setdefault(node.compute.uuid, []).append(placed)

    def since(self, snap: snapshot_mod.CellSnapshot | None,
              node: snapshot_mod.NodeEntry) -> list[Placed]:
        """What this scheduler placed on ``node`` that its row lacks.

        Forgets the placements whose row the cell's snapshot has replaced
        (the database now shows them, or shows they did not happen), and
        those older than PLACED_MAX_AGE at the snapshot's refresh.
        """
        uuid = node.compute.uuid
        if not self._placed.get(uuid):
            return []
        current = snap.nodes.get(uuid) if snap else None
        with self._lock:
            placed = self._placed.get(uuid, [])
            kept = [p for p in placed
                    if current is not None and _same_row(p.node, current)
                    and snap.loaded_at - p.at <= PLACED_MAX_AGE]
            if kept:
                self._placed[uuid] = kept
            else:
                self._placed.pop(uuid, None)
        return [p for p in kept if _same_row(p.node, node)]
