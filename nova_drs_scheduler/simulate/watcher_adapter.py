"""OpenStack Watcher's balancing strategies, driven on the modelled cluster.

Each period plays one audit of a continuous Watcher audit: the simulated
cluster becomes Watcher's compute data model (as its Nova collector would
build it: a migrating instance still sits on its source, ``active``), a
fake datasource answers its metric queries from the simulated samples, the
strategy class from python-watcher runs unchanged, and the migrations of its
solution are returned for the engine to execute like any other move.

Timing, as for every strategy (see ``strategies``): the input (building
the compute model, and answering the strategy's datasource queries from
the simulated samples) and the decision (``execute()`` less the time spent
in those queries) are measured apart.  ``ModelRoot.to_string()`` is
replaced by a constant on the model we hand over: Watcher builds that
debug string eagerly for a ``LOG.debug`` call on every audit (about 47 ms
of a 57 ms audit on 17 hosts), a cost of its logging, not of its decision.

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
        #: Seconds spent answering queries: input reading, not decision.
        self.seconds = 0.0

    def _periods(self, seconds) -> int:
        interval = self._view.interval
        return max(1, math.ceil((seconds or interval) / interval))

    def statistic_aggregation(self, resource, resource_type, meter_name,
                              period, aggregate, granularity):
        started = time.process_time()
        try:
            return self._answer(resource, resource_type, meter_name, period)
        finally:
            self.seconds += time.process_time() - started

    def _answer(self, resource, resource_type, meter_name, period):
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


def _no_debug_string() -> str:
    return 'compute model (string not built by the simulator)'


class WatcherStrategy:
    """One Watcher strategy class, run once per period."""

    def __init__(self, name: str, parameters: dict, seed: int,
                 label: str = ''):
        if name not in WATCHER_STRATEGIES:
            raise ValueError(f'unknown Watcher strategy {name!r}')
        self.name = label or f'watcher_{name}'
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
        self._root = None
        # Watcher loads the strategy's goal plugin (stevedore) in the
        # constructor of every audit's strategy; load it once.
        goal = self._cls.get_goal()
        self._cls = type(self._cls.__name__, (self._cls,),
                         {'get_goal': classmethod(lambda cls: goal)})

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

        Built once, then brought back to the cluster's placement every
        audit: a strategy moves instances in the model while it plans, and
        real migrations move them on the cluster.  (Rebuilding 1000
        instances into the graph every audit would triple the simulator's
        run time, for the same model.)
        """
        cluster = view.cluster
        root, elements = self._root, self._elements
        if root is None:
            elements.update((h, self._node(h, cluster.spec))
                            for h in cluster.hosts)
            elements.update((vm.name, self._instance(vm))
                            for vm in cluster.vms.values())
            root = self._root = self._model_root.ModelRoot()
            root.to_string = _no_debug_string
            root.extended_attributes_enabled = False
            for host in cluster.hosts:
                root.add_node(elements[host])
            for name, host in cluster.location.items():
                root.add_instance(elements[name])
                root.map_instance(elements[name], elements[host])
        for name, host in cluster.location.items():
            instance = elements[name]
            instance.host = instance.hypervisor_hostname = host
            mapped = next(iter(root.neighbors(name)))
            if mapped != host:
                root.migrate_instance(instance, elements[mapped],
                                      elements[host])
        return root

    def plan(self, view) -> tuple:
        """(moves as (instance, destination), input seconds, decision
        seconds)."""
        strategy = self._cls(config=self._utils.Struct(datasources=None),
                             osc=object())
        started = time.process_time()
        # No public setters: Watcher's collector and datasource managers
        # would otherwise query a live cloud.
        strategy._compute_model = self._model(view)
        datasource = strategy._datasource_backend = _Datasource(view)
        strategy.input_parameters = self._utils.Struct(
            {key: _struct(self._utils, value)
             for key, value in self.parameters.items()})
        random.seed(f'{self._seed}-{view.period}')
        built = time.process_time()
        solution = strategy.execute()
        decided = time.process_time()
        moves = [(a['input_parameters']['resource_id'],
                  a['input_parameters']['destination_node'])
                 for a in solution.actions if a['action_type'] == 'migrate']
        return (moves, built - started + datasource.seconds,
                decided - built - datasource.seconds)


def _struct(utils, value):
    """Watcher reads nested parameters by attribute and by key."""
    return utils.Struct(value) if isinstance(value, dict) else value
