"""OpenStack Watcher's balancing strategies, driven on the modelled cluster.

Each period plays one audit of a continuous Watcher audit: the simulated
cluster becomes Watcher's compute data model (as its Nova collector would
build it: a migrating instance still sits on its source, ``active``), a
fake datasource answers its metric queries from the simulated samples, the
strategy class from python-watcher runs unchanged, and the migrations of its
solution are returned for the engine to execute like any other move.

Watcher is imported only when one of its strategies is asked for; it lives
in its own virtualenv (``tox -e watcher``), away from Nova's.
"""

import logging
import math
import random
import time

WATCHER_STRATEGIES = ('workload_balance', 'workload_stabilization')


class WatcherMissingError(RuntimeError):
    """python-watcher is not importable in this environment."""


def _watcher():
    try:
        from watcher.common import utils
        from watcher.decision_engine.model import element
        from watcher.decision_engine.model import model_root
        from watcher.decision_engine.strategy.strategies import (
            workload_balance,
        )
        from watcher.decision_engine.strategy.strategies import (
            workload_stabilization,
        )
    except ImportError as exc:
        raise WatcherMissingError(
            f'python-watcher is not installed here ({exc}); run the '
            f'Watcher strategies with `tox -e watcher`') from exc
    classes = {
        'workload_balance': workload_balance.WorkloadBalance,
        'workload_stabilization':
            workload_stabilization.WorkloadStabilization,
    }
    return utils, element, model_root, classes


class _Datasource:
    """Answers ``statistic_aggregation`` from the simulated samples.

    Units are those of Watcher's real datasources: CPU in percent (of the
    instance's vCPUs, of the host's CPUs), instance RAM in MB, host RAM in
    KB.  The mean covers the samples inside the requested period.
    """

    NAME = 'simulator'

    def __init__(self, view):
        self._view = view

    def _periods(self, seconds) -> int:
        interval = self._view.interval
        return max(1, math.ceil((seconds or interval) / interval))

    def statistic_aggregation(self, resource, resource_type, meter_name,
                              period, aggregate, granularity):
        view = self._view
        count = self._periods(period)
        if resource_type == 'instance':
            vm = view.cluster.vms[resource.uuid]
            if meter_name == 'instance_ram_usage':
                return float(vm.flavor.memory_mb)
            return view.vm_percent(vm, count)
        if meter_name == 'host_ram_usage':
            return view.cluster.used_memory_mb[resource.uuid] * 1024.0
        history = list(view.host_history[resource.uuid])[-count:]
        return sum(history) / len(history)


class WatcherStrategy:
    """One Watcher strategy class, run once per period."""

    def __init__(self, name: str, parameters: dict, seed: int):
        if name not in WATCHER_STRATEGIES:
            raise ValueError(f'unknown Watcher strategy {name!r}')
        self.name = f'watcher_{name}'
        self._utils, self._element, self._model_root, classes = _watcher()
        self._cls = classes[name]
        schema = self._cls.get_schema()['properties']
        self.parameters = {key: value['default']
                           for key, value in schema.items()}
        self.parameters.update(parameters)
        # workload_stabilization's default host choice draws from the
        # global random module: seed it so runs are reproducible.
        self._seed = seed
        # Its per-audit warnings ("no proper target host") would flood the
        # terminal once per period; the results table says what happened.
        logging.getLogger('watcher').setLevel(logging.ERROR)
        self._elements = {}

    def _node(self, host: str, spec):
        return self._element.ComputeNode(
            uuid=host, hostname=host, memory=spec.host_memory_mb,
            memory_mb_reserved=0, disk=1_000_000, disk_gb_reserved=0,
            vcpus=spec.host_vcpus, vcpu_reserved=0,
            memory_ratio=spec.ram_allocation_ratio,
            vcpu_ratio=spec.cpu_allocation_ratio, disk_ratio=1.0)

    def _instance(self, vm):
        return self._element.Instance(
            uuid=vm.name, name=vm.name, memory=vm.flavor.memory_mb, disk=0,
            vcpus=vm.flavor.vcpus, metadata={},
            project_id='00000000-0000-0000-0000-000000000000')

    def _model(self, view):
        """Watcher's compute model of the cluster as Nova reports it now.

        The elements are built once (they are slow to construct and only
        their host changes); the graph is rebuilt every audit, because a
        strategy edits it while planning.
        """
        cluster = view.cluster
        if not self._elements:
            self._elements = {h: self._node(h, cluster.spec)
                              for h in cluster.hosts}
            self._elements.update((vm.name, self._instance(vm))
                                  for vm in cluster.vms.values())
        root = self._model_root.ModelRoot()
        root.extended_attributes_enabled = False
        for host in cluster.hosts:
            root.add_node(self._elements[host])
        for name, host in cluster.location.items():
            instance = self._elements[name]
            instance.host = instance.hypervisor_hostname = host
            root.add_instance(instance)
            root.map_instance(instance, self._elements[host])
        return root

    def plan(self, view) -> tuple:
        """(moves as (instance, destination), seconds spent planning)."""
        strategy = self._cls(config=self._utils.Struct(datasources=None),
                             osc=object())
        # No public setters: Watcher's collector and datasource managers
        # would otherwise query a live cloud.
        strategy._compute_model = self._model(view)
        strategy._datasource_backend = _Datasource(view)
        strategy.input_parameters = self._utils.Struct(
            {key: _struct(self._utils, value)
             for key, value in self.parameters.items()})
        random.seed(f'{self._seed}-{view.period}')
        started = time.perf_counter()
        solution = strategy.execute()
        seconds = time.perf_counter() - started
        moves = [(a['input_parameters']['resource_id'],
                  a['input_parameters']['destination_node'])
                 for a in solution.actions if a['action_type'] == 'migrate']
        return moves, seconds


def _struct(utils, value):
    """Watcher reads nested parameters by attribute and by key."""
    return utils.Struct(value) if isinstance(value, dict) else value
