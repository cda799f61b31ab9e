"""HostState built once per compute-node row and forked per request.

Stock Nova rebuilds every HostState from versioned objects, under a
per-host lock, on every request. Here the expensive part (parsing NUMA
topology, PCI pools, metrics and stats out of the row) runs once per row
version, in a *template* that no request ever touches. Each request gets a
fork: a new object with the template's values, its own ``limits``,
``allocation_candidates`` and ``aggregates``, and private copies of the
NUMA topology, PCI pools and instances the first time it consumes
resources (Nova adds a server group member to ``instances`` right after).
So a request's objects stay in that request (the property whose loss
was bug 1742827); only the counters listed in ``CONSUMED_FIELDS`` are
reported, for the host manager to carry until the row shows them.
"""

import copy
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from nova.scheduler import host_manager

#: The HostState counters ``consume_from_request`` changes by plain
#: arithmetic: what the host manager carries from one request to the next
#: until the compute node's row shows the placement (NUMA cells and PCI
#: pools are not carried).
CONSUMED_FIELDS = ('free_ram_mb', 'free_disk_mb', 'vcpus_used',
                   'num_instances', 'num_io_ops')

#: What ``_update_from_compute_node`` parses out of a compute node's JSON
#: fields: groups of HostState attributes, each with the ComputeNode fields
#: it is built from. A group is reused or rebuilt whole: the PCI stats hold
#: the NUMA topology they were built with.
PARSED = (
    (('numa_topology', 'pci_stats'),
     frozenset({'numa_topology', 'pci_device_pools'})),
    (('metrics',), frozenset({'metrics'})),
)

Consumption = Mapping[str, float]


class _Hiding:
    """``compute`` with the ``hidden`` fields reading as unset (None), so
    that Nova's ``_update_from_compute_node`` does not parse them."""

    def __init__(self, compute: Any, hidden: frozenset) -> None:
        self._compute = compute
        self._hidden = hidden

    def __contains__(self, name: str) -> bool:
        return name in self._compute

    def __getattr__(self, name: str) -> Any:
        if name in self._hidden:
            return None
        return getattr(self._compute, name)


class CachedHostState(host_manager.HostState):
    """A HostState that can be forked cheaply for one request."""

    def __init__(self, host: str, node: str, cell_uuid: str) -> None:
        super().__init__(host, node, cell_uuid)
        # True while numa_topology and pci_stats are the template's objects.
        self._shares_template = False
        #: Told what each consumption changed (forks only).
        self._on_consume: Callable[[Consumption], None] | None = None

    def update_from(self, compute: Any,
                    previous: 'CachedHostState | None' = None,
                    unchanged: frozenset = frozenset()) -> None:
        """Nova's ``_update_from_compute_node``, except that the objects
        ``previous`` parsed from the ComputeNode fields in ``unchanged``
        (same text as its row's) are reused instead of parsed again: half
        of a template's cost is parsing the NUMA topology, which a report
        rarely changes.

        Sharing them is safe for the reason sharing them with forks is:
        a template is never consumed, and a fork copies the NUMA topology
        and PCI stats before it consumes.
        """
        reused = [attrs for attrs, fields in PARSED
                  if previous is not None and fields <= unchanged]
        if not reused:
            self._update_from_compute_node(compute)
            return
        hidden = frozenset().union(*(fields for attrs, fields in PARSED
                                     if attrs in reused))
        self._update_from_compute_node(_Hiding(compute, hidden))
        for attrs in reused:
            for attr in attrs:
                setattr(self, attr, getattr(previous, attr))

    def fork(self, service: Mapping, aggregates: list, instances: dict,
             on_consume: Callable[[Consumption], None] | None = None,
             ) -> 'CachedHostState':
        """Return this template's values in a new, request-private state.

        ``aggregates`` becomes the state's own; ``instances`` is shared
        until the state consumes resources; ``on_consume`` gets the change
        of every ``CONSUMED_FIELDS`` counter each time the request consumes.
        """
        state = object.__new__(type(self))
        state.__dict__.update(self.__dict__)
        state.limits = {}
        state.allocation_candidates = []
        state.service = service
        state.aggregates = aggregates
        state.instances = instances
        state._shares_template = True
        state._on_consume = on_consume
        return state

    def add(self, consumption: Consumption) -> None:
        """Apply a consumption recorded on another fork of this row."""
        for field, change in consumption.items():
            setattr(self, field, getattr(self, field) + change)

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
        before = [getattr(self, field) for field in CONSUMED_FIELDS]
        super()._locked_consume_from_request(spec_obj)
        if self._on_consume is not None:
            self._on_consume({
                field: getattr(self, field) - old
                for field, old in zip(CONSUMED_FIELDS, before, strict=True)})
