"""HostState built once per compute-node row and forked per request.

Stock Nova rebuilds every HostState from versioned objects, under a
per-host lock, on every request. Here the expensive part (parsing NUMA
topology, PCI pools, metrics and stats out of the row) runs once per row
version, in a *template* that no request ever touches. Each request gets a
fork: a new object with the template's values, its own ``limits``,
``allocation_candidates`` and ``aggregates``, and private copies of the
NUMA topology, PCI pools and instances the first time it consumes
resources (Nova adds a server group member to ``instances`` right after).
So whatever a request consumes stays in that request; this is the
property whose loss was bug 1742827.
"""

import copy
from collections.abc import Mapping
from typing import Any

from nova.scheduler import host_manager


class CachedHostState(host_manager.HostState):
    """A HostState that can be forked cheaply for one request."""

    def __init__(self, host: str, node: str, cell_uuid: str) -> None:
        super().__init__(host, node, cell_uuid)
        # True while numa_topology and pci_stats are the template's objects.
        self._shares_template = False

    def fork(self, service: Mapping, aggregates: list,
             instances: dict) -> 'CachedHostState':
        """Return this template's values in a new, request-private state.

        ``aggregates`` becomes the state's own; ``instances`` is shared
        until the state consumes resources.
        """
        state = object.__new__(type(self))
        state.__dict__.update(self.__dict__)
        state.limits = {}
        state.allocation_candidates = []
        state.service = service
        state.aggregates = aggregates
        state.instances = instances
        state._shares_template = True
        return state

    def _locked_consume_from_request(self, spec_obj: Any) -> None:
        # Consumption replaces numa_topology and mutates pci_stats in place,
        # and the scheduler then adds group members to instances: take
        # private copies first so the template, the cached instance rows
        # and the other requests never see it.
        if self._shares_template:
            self.numa_topology = copy.deepcopy(self.numa_topology)
            self.pci_stats = copy.deepcopy(self.pci_stats)
            self.instances = dict(self.instances)
            self._shares_template = False
        super()._locked_consume_from_request(spec_obj)
