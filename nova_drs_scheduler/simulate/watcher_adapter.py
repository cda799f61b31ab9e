"""OpenStack Watcher's balancing strategies, driven on the modelled cluster.

Each period plays one audit of a continuous Watcher audit: the simulated
cluster becomes Watcher's compute data model (as its Nova collector would
build it: a migrating instance still sits on its source, ``active``), a
fake datasource answers its metric queries from the simulated samples, the
strategy class from python-watcher runs unchanged, and the migrations of its
solution are run by Watcher's applier (``watcher_applier``), two at a time
in layers.  The audits run every period even while an action plan runs, as
an audit with ``force`` set does; with ``force`` off, as by Watcher's
default, an audit is skipped while the plan before it still runs.

Timing, as for every strategy (see ``strategies``): the input (building
the compute model, and answering the strategy's datasource queries from
the simulated samples) and the decision (``execute()`` less the time spent
in those queries) are measured apart.  ``ModelRoot.to_string()`` is
replaced by a constant on the model we hand over: Watcher builds that
debug string eagerly for a ``LOG.debug`` call on every audit (about 47 ms
of a 57 ms audit on 17 hosts), a cost of its logging, not of its decision.

Watcher is imported only when one of its strategies is asked for; it lives
in its own virtualenv (``tox -e watcher``), away from Nova's.  Its
``host_maintenance`` strategy, run once per host rather than per period,
is driven by ``watcher_maintenance`` on the same model.
"""

import logging
import math
import random
import time

from nova_drs_scheduler.simulate import watcher_applier

WATCHER_STRATEGIES = ('workload_balance', 'workload_stabilization')
HOST_MAINTENANCE = 'host_maintenance'
CONSOLIDATION = 'vm_workload_consolidation'


class WatcherMissingError(RuntimeError):
    """python-watcher is not importable in this environment."""


def _watcher():
    try:
        from watcher.common import utils
        from watcher.decision_engine.model import element
        from watcher.decision_engine.model import model_root
        from watcher.decision_engine.strategy.strategies import (
            host_maintenance,
        )
        from watcher.decision_engine.strategy.strategies import (
            vm_workload_consolidation,
        )
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
        HOST_MAINTENANCE: host_maintenance.HostMaintenance,
        CONSOLIDATION: vm_workload_consolidation.VMWorkloadConsolidation,
    }
    return utils, element, model_root, classes


class Datasource:
    """Answers ``statistic_aggregation`` from the simulated samples, and
    the per-metric getters of Watcher's datasource base class
    (``get_host_cpu_usage`` and the like) through it.

    Units are those of Watcher's real datasources: CPU in percent (of the
    instance's vCPUs, of the host's CPUs), instance RAM in MB (its flavor's,
    used or allocated), root disk 0 GB (disk is not modelled), host RAM in
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

    def __getattr__(self, name):
        """``get_<meter>(resource, period, aggregate, granularity)``."""
        meter = name[len('get_'):]
        if not name.startswith('get_') or meter not in _METERS:
            raise AttributeError(name)

        def get(resource, period, aggregate, granularity=None):
            return self.statistic_aggregation(
                resource, _METERS[meter], meter, period, aggregate,
                granularity)
        return get

    def _answer(self, resource, resource_type, meter_name, period):
        view = self._view
        count = self._periods(period)
        if resource_type == 'instance':
            vm = view.cluster.vms[resource.uuid]
            if meter_name in ('instance_ram_usage', 'instance_ram_allocated'):
                return float(vm.flavor.memory_mb)
            if meter_name == 'instance_root_disk_size':
                return 0.0
            return view.vm_percent(vm, count)
        if meter_name == 'host_ram_usage':
            return view.cluster.used_memory_mb[resource.uuid] * 1024.0
        history = list(view.host_history[resource.uuid])[-count:]
        return sum(history) / len(history)


#: The meters of Watcher's per-metric getters, and their resource type.
_METERS = {
    'instance_cpu_usage': 'instance', 'instance_ram_usage': 'instance',
    'instance_ram_allocated': 'instance',
    'instance_root_disk_size': 'instance',
    'host_cpu_usage': 'compute_node', 'host_ram_usage': 'compute_node',
}


def _no_debug_string() -> str:
    return 'compute model (string not built by the simulator)'


class ComputeModel:
    """Watcher's compute data model of the cluster as Nova reports it now.

    Built once, then brought back to the cluster's placement and service
    states before every audit: a strategy moves instances in the model
    while it plans, and real migrations move them on the cluster.
    (Rebuilding 1000 instances into the graph every audit would triple the
    simulator's run time, for the same model.)
    """

    def __init__(self):
        _, self._element, self._model_root, _ = _watcher()
        self._elements = {}
        self._root = None
        self._disabled = set()
        self._down = frozenset()

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

    def sync(self, cluster, down=frozenset()):
        """The model root, in step with ``cluster``; ``down``: hosts whose
        ``nova-compute`` does not report up (booting)."""
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
        states = self._element.ServiceState
        for host in self._disabled ^ cluster.disabled:
            elements[host].status = (states.DISABLED.value
                                     if host in cluster.disabled
                                     else states.ENABLED.value)
        self._disabled = set(cluster.disabled)
        for host in self._down ^ down:
            elements[host].state = (states.OFFLINE.value if host in down
                                    else states.ONLINE.value)
        self._down = frozenset(down)
        for name, host in cluster.location.items():
            instance = elements[name]
            instance.host = instance.hypervisor_hostname = host
            mapped = next(iter(root.neighbors(name)))
            if mapped != host:
                root.migrate_instance(instance, elements[mapped],
                                      elements[host])
        return root


class StrategyClass:
    """One python-watcher strategy class and its parameters, ready to run
    audits: its schema's defaults, then ``parameters``."""

    def __init__(self, name: str, parameters: dict):
        self._utils, _, _, classes = _watcher()
        cls = classes[name]
        schema = cls.get_schema()['properties']
        self.parameters = {key: value['default']
                           for key, value in schema.items()
                           if 'default' in value}
        self.parameters.update(parameters)
        # Watcher loads the strategy's goal plugin (stevedore) in the
        # constructor of every audit's strategy; load it once.
        goal = cls.get_goal()
        self._cls = type(cls.__name__, (cls,),
                         {'get_goal': classmethod(lambda cls: goal)})
        # Per-audit warnings ("no proper target host") would flood the
        # terminal; the results say what happened.
        logging.getLogger('watcher').setLevel(logging.ERROR)

    def new(self):
        """A fresh strategy object, as each audit gets."""
        return self._cls(config=self._utils.Struct(datasources=None),
                         osc=object())

    def ready(self, strategy, root, datasource, parameters=None) -> None:
        """Give ``strategy`` its model, datasource and parameters (plus
        ``parameters`` for this audit)."""
        # No public setters: Watcher's collector and datasource managers
        # would otherwise query a live cloud.
        strategy._compute_model = root
        strategy._datasource_backend = datasource
        strategy.input_parameters = self._utils.Struct(
            {key: _struct(self._utils, value)
             for key, value in {**self.parameters,
                                **(parameters or {})}.items()})


class WatcherStrategy:
    """One Watcher balancing strategy class, run once per period."""

    def __init__(self, name: str, parameters: dict, seed: int,
                 label: str = '', force: bool = True):
        if name not in WATCHER_STRATEGIES:
            raise ValueError(f'unknown Watcher strategy {name!r}')
        self.name = label or f'watcher_{name}'
        self._class = StrategyClass(name, parameters)
        self.parameters = self._class.parameters
        self._model = ComputeModel()
        self._applier = watcher_applier.Applier()
        self._force = force
        # workload_stabilization's default host choice draws from the
        # global random module: seed it so runs are reproducible.
        self._seed = seed

    def plan(self, view) -> tuple:
        """One audit, its migrations handed to the applier: ``([], input
        seconds, decision seconds)``; none while a plan runs, unless the
        audit is forced."""
        if not self._force and self._applier.busy(view.now):
            return self.react(view)
        strategy = self._class.new()
        started = time.process_time()
        datasource = Datasource(view)
        self._class.ready(strategy, self._model.sync(view.cluster),
                          datasource)
        random.seed(f'{self._seed}-{view.period}')
        built = time.process_time()
        solution = strategy.execute()
        decided = time.process_time()
        self._applier.add(
            [(a['input_parameters']['resource_id'],
              a['input_parameters']['source_node'],
              a['input_parameters']['destination_node'])
             for a in solution.actions if a['action_type'] == 'migrate'],
            view.now)
        self._applier.run(view)
        return ([], built - started + datasource.seconds,
                decided - built - datasource.seconds)

    def react(self, view) -> tuple:
        """Between periods: the applier's layers."""
        self._applier.run(view)
        return [], 0.0, 0.0


def _struct(utils, value):
    """Watcher reads nested parameters by attribute and by key."""
    return utils.Struct(value) if isinstance(value, dict) else value
