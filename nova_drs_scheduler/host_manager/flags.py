"""The disabled and forced-down flags of the compute services, as they are
now whatever the age of the cached rows.

One query per cell at every request returns those few services
(``rows.service_flags``); a host disabled through Nova's API is therefore
left out by every request that starts after the API call returned, and an
enabled one is back at once.
"""

from typing import Any

from nova import context as context_module
from oslo_log import log as logging

from nova_drs_scheduler.host_manager import rows
from nova_drs_scheduler.host_manager import snapshot as snapshot_mod

LOG = logging.getLogger(__name__)


def _read_flags(cctxt: Any, snapshots: dict) -> list:
    snap = snapshots[cctxt.cell_uuid]
    return rows.service_flags(cctxt, snap.flagged)


class FlagOverlays:
    """Cell uuid -> {host: Overlay}: the cached services whose flags the
    latest request found changed, reused by the next ones."""

    def __init__(self) -> None:
        self._by_cell: dict[str, dict[str, snapshot_mod.Overlay]] = {}

    def clear(self) -> None:
        self._by_cell = {}

    def get(self, cell_uuid: str, host: str) -> snapshot_mod.Overlay | None:
        """The overlay of ``host`` the latest request of its cell made."""
        return self._by_cell.get(cell_uuid, {}).get(host)

    def read(self, context: Any, cells: list, snapshots: dict) -> dict:
        """``{cell_uuid: {host: Overlay}}`` for ``cells``: the services
        whose disabled or forced-down flags now differ from the cached
        rows', from one query per cell, the cells read in parallel.

        A cell whose flags cannot be read is left out: its hosts are not
        used, as stock Nova does not use the hosts of a cell it cannot
        read, rather than used on flags that may be out of date.
        """
        if not cells:
            return {}
        results = context_module.scatter_gather_cells(
            context, cells, context_module.CELL_TIMEOUT, _read_flags,
            snapshots)
        overlays = {}
        for cell_uuid, result in results.items():
            if context_module.is_cell_failure_sentinel(result):
                LOG.warning('Failed to read the disabled and forced-down '
                            'compute services of cell %s: its hosts are '
                            'not used for this request', cell_uuid)
                continue
            overlays[cell_uuid] = snapshot_mod.overlay_flags(
                snapshots[cell_uuid], result, self._by_cell.get(cell_uuid))
            self._by_cell[cell_uuid] = overlays[cell_uuid]
        return overlays
