"""HostState built once per compute-node row and forked per request.

Stock Nova rebuilds every HostState from versioned objects, under a
per-host lock, on every request. Here the expensive part (parsing NUMA
topology, PCI pools, metrics and stats out of the row) runs once per row
version, in a *template* that no request ever touches. Each request gets a
fork: a new object with the template's values, its own ``limits``,
``allocation_candidates``, ``instances`` and ``aggregates``, and private
copies of the NUMA topology and PCI pools the first time it consumes
resources. So whatever a request consumes stays in that request; this is
the property whose loss was bug 1742827.
"""

import copy
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from nova.scheduler import host_manager


class CachedHostState(host_manager.HostState):
    """A HostState that can be forked cheaply for one request."""

    def __init__(self, host: str, node: str, cell_uuid: str) -> None:
        super().__init__(host, node, cell_uuid)
        # True while numa_topology and pci_stats are the template's objects.
        self._shares_template = False

    def fork(self, service: Mapping, aggregates: Iterable,
             instances: dict) -> 'CachedHostState':
        """Return this template's values in a new, request-private state."""
        state = object.__new__(type(self))
        state.__dict__.update(self.__dict__)
        state.limits = {}
        state.allocation_candidates = []
        state.service = service
        state.aggregates = list(aggregates)
        state.instances = instances
        state._shares_template = True
        return state

    def _locked_consume_from_request(self, spec_obj: Any) -> None:
        # Consumption replaces numa_topology and mutates pci_stats in place:
        # take private copies first so the template and the other requests
        # never see it.
        if self._shares_template:
            self.numa_topology = copy.deepcopy(self.numa_topology)
            self.pci_stats = copy.deepcopy(self.pci_stats)
            self._shares_template = False
        super()._locked_consume_from_request(spec_obj)
