"""The modelled cluster: hosts, flavors, placement and live migrations.

Capacity follows Nova's CoreFilter/RamFilter and placement: a host takes an
instance while the vCPUs (RAM) allocated to it stay within its vCPUs (RAM)
times the allocation ratio, and its compute service is enabled (Nova's
ComputeFilter; a host in maintenance is disabled).  A live migration claims
the destination when Nova accepts it (placement holds the allocation on
both hosts, queued or copying) and releases the source when it ends.  Its
copy waits in its source's queue and shares the hosts' links as
:mod:`~nova_drs_scheduler.simulate.links` models them.
A host's CPU is sampled at the end of each period, as a compute node reports
it: the instances on it then, and, for the time a copy ran during the
period, the migrating instance's load on the other host too (the guest runs
on the source while the destination receives and replays its pages).
"""

import dataclasses
import heapq
import itertools
import math
import random

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import links

#: The planner's defaults: the simulated migration is the one it costs.
_PLANNER = model.PlannerConfig()


@dataclasses.dataclass(frozen=True)
class Flavor:
    name: str
    vcpus: int
    memory_mb: int
    weight: float = 1.0


#: A general-purpose cloud's mix: mostly small instances, a few big ones.
DEFAULT_FLAVORS = (
    Flavor('m1.small', 1, 2048, 0.40),
    Flavor('m1.medium', 2, 4096, 0.35),
    Flavor('m1.large', 4, 8192, 0.20),
    Flavor('m1.xlarge', 8, 16384, 0.05),
)


def parse_flavors(text: str) -> tuple:
    """``name:vcpus:ram_mb:weight,...`` -> flavors, e.g. ``a:1:2048:0.5``."""
    flavors = []
    for item in filter(None, (part.strip() for part in text.split(','))):
        fields = item.split(':')
        try:
            name, vcpus, ram, weight = fields
            flavor = Flavor(name, int(vcpus), int(ram), float(weight))
        except ValueError:
            raise ValueError(f'bad flavor {item!r}: expected '
                             f'name:vcpus:ram_mb:weight')
        if flavor.vcpus < 1 or flavor.memory_mb < 1 or flavor.weight <= 0:
            raise ValueError(f'bad flavor {item!r}: vcpus, ram and weight '
                             f'must be positive')
        flavors.append(flavor)
    if not flavors:
        raise ValueError('no flavor given')
    return tuple(flavors)


@dataclasses.dataclass(frozen=True)
class ClusterSpec:
    hosts: int
    host_vcpus: int = 32
    host_memory_mb: int = 512 * 1024
    cpu_allocation_ratio: float = 8.0
    ram_allocation_ratio: float = 1.0
    #: Migration bandwidth in Mbit/s, and MiB/s of RAM each busy core of
    #: the instance dirties meanwhile (``[drs] migration_bandwidth`` and
    #: ``migration_dirty_rate``).
    bandwidth_mbps: float = _PLANNER.migration_bandwidth
    dirty_mib_per_core: float = _PLANNER.migration_dirty_rate
    #: Nova's ``[DEFAULT] max_concurrent_live_migrations``: outgoing copies
    #: at once per source compute, the rest queued (0: no limit).
    max_concurrent_live_migrations: int = 1
    placement: str = 'spread'   # 'spread' | 'random'
    seed: int = 0

    def __post_init__(self):
        if self.hosts < 1:
            raise ValueError('a cluster needs at least one host')
        if self.placement not in ('spread', 'random'):
            raise ValueError(f'unknown placement {self.placement!r}')
        if self.bandwidth_mbps <= 0:
            raise ValueError('the migration bandwidth must be positive')
        if self.dirty_mib_per_core < 0:
            raise ValueError('the dirty rate must not be negative')
        if self.max_concurrent_live_migrations < 0:
            raise ValueError('max_concurrent_live_migrations must not be '
                             'negative')


@dataclasses.dataclass(frozen=True)
class VM:
    name: str
    index: int          # column in the trace
    flavor: Flavor


def assign_flavors(names, flavors, seed: int) -> tuple:
    """Give each trace VM a flavor, drawn by weight, reproducibly."""
    rng = random.Random(f'flavors-{seed}')
    weights = [f.weight for f in flavors]
    return tuple(VM(name, i, rng.choices(flavors, weights)[0])
                 for i, name in enumerate(names))


def hosts_for_load(vms, trace, target_percent: float,
                   host_vcpus: int) -> int:
    """Hosts needed for the trace's mean CPU to be ``target_percent``."""
    total = sum(step[vm.index] * vm.flavor.vcpus
                for step in trace.steps for vm in vms) / 100.0
    mean_cores = total / len(trace.steps)
    return max(1, round(mean_cores / (host_vcpus * target_percent / 100.0)))


def hosts_for_peak(vms, trace, peak_percent: float, host_vcpus: int) -> int:
    """Hosts for the trace's busiest step to load them ``peak_percent``:
    a cluster sized for the day's peak."""
    peak = max(sum(step[vm.index] * vm.flavor.vcpus for vm in vms)
               for step in trace.steps) / 100.0
    return max(1, math.ceil(peak / (host_vcpus * peak_percent / 100.0)))


def host_names(count: int) -> tuple:
    """The names of a cluster of ``count`` hosts, in order."""
    width = len(str(count - 1))
    return tuple(f'host-{i:0{width}d}' for i in range(count))


class Cluster:
    """Allocations, locations and in-flight migrations; no load history."""

    def __init__(self, spec: ClusterSpec, vms):
        self.spec = spec
        self.hosts = host_names(spec.hosts)
        self.vms = {vm.name: vm for vm in vms}
        self.location = {}
        #: The instances on each host (those migrating off it included).
        self.residents = {h: set() for h in self.hosts}
        self.used_vcpus = dict.fromkeys(self.hosts, 0)
        self.used_memory_mb = dict.fromkeys(self.hosts, 0)
        #: {instance: its migration, queued or copying}
        self.inflight = {}
        self.links = links.Links(spec.bandwidth_mbps,
                                 spec.dirty_mib_per_core,
                                 spec.max_concurrent_live_migrations)
        #: Hosts whose compute service is disabled (in maintenance).
        self.disabled = set()
        self.vcpu_limit = spec.host_vcpus * spec.cpu_allocation_ratio
        self.memory_limit = spec.host_memory_mb * spec.ram_allocation_ratio
        self._place(vms)

    def rejection(self, vm: VM, host: str):
        """Why ComputeFilter/CoreFilter/RamFilter would refuse ``vm`` on
        ``host``."""
        if host in self.disabled:
            return model.Rejection(host, 'ComputeFilter',
                                   'compute service disabled')
        vcpus = self.used_vcpus[host] + vm.flavor.vcpus
        if vcpus > self.vcpu_limit:
            return model.Rejection(
                host, 'CoreFilter',
                f'{vcpus} vCPUs > {self.vcpu_limit:g} allowed')
        memory = self.used_memory_mb[host] + vm.flavor.memory_mb
        if memory > self.memory_limit:
            return model.Rejection(
                host, 'RamFilter',
                f'{memory} MB > {self.memory_limit:g} MB allowed')
        return None

    def _claim(self, vm: VM, host: str) -> None:
        self.used_vcpus[host] += vm.flavor.vcpus
        self.used_memory_mb[host] += vm.flavor.memory_mb

    def _release(self, vm: VM, host: str) -> None:
        self.used_vcpus[host] -= vm.flavor.vcpus
        self.used_memory_mb[host] -= vm.flavor.memory_mb

    def _free_score(self, host: str) -> float:
        """Nova's RAM and CPU weighers, spreading: more free is better."""
        return ((1 - self.used_memory_mb[host] / self.memory_limit)
                + (1 - self.used_vcpus[host] / self.vcpu_limit))

    def scheduler_choice(self, vm: VM) -> str | None:
        """Where Nova's scheduler sends ``vm`` when no host is given.

        Its filters, then its default weighers as at boot (:meth:`_place`,
        ``spread``): the most free RAM and vCPUs.  The source is ignored,
        as Nova's live migration ignores it.  None: no valid host.
        """
        source = self.location[vm.name]
        allowed = [h for h in self.hosts
                   if h != source and self.rejection(vm, h) is None]
        return min(allowed, key=lambda h: (-self._free_score(h), h),
                   default=None)

    def _place(self, vms) -> None:
        rng = random.Random(f'placement-{self.spec.seed}')
        heap = [(-self._free_score(h), h) for h in self.hosts]
        heapq.heapify(heap)
        for vm in vms:
            if self.spec.placement == 'random':
                host = self._random_host(vm, rng)
            else:
                host = self._spread_host(vm, heap)
            self._claim(vm, host)
            self.location[vm.name] = host
            self.residents[host].add(vm.name)
            if self.spec.placement == 'spread':
                heapq.heappush(heap, (-self._free_score(host), host))

    def _spread_host(self, vm: VM, heap: list) -> str:
        skipped = []
        try:
            while heap:
                _, host = heapq.heappop(heap)
                if self.rejection(vm, host) is None:
                    return host
                skipped.append(host)
            raise ValueError(self._no_room(vm))
        finally:
            for host in skipped:
                heapq.heappush(heap, (-self._free_score(host), host))

    def _random_host(self, vm: VM, rng: random.Random) -> str:
        hosts = list(self.hosts)
        rng.shuffle(hosts)
        for host in hosts:
            if self.rejection(vm, host) is None:
                return host
        raise ValueError(self._no_room(vm))

    def _no_room(self, vm: VM) -> str:
        return (f'initial placement: no host can take {vm.name} '
                f'({vm.flavor.name}); add hosts or raise the allocation '
                f'ratios')

    def start_migration(self, name: str, destination: str, now: float,
                        step) -> links.Migration:
        """Nova accepts the migration now: the destination is claimed, and
        its copy starts (the instance's load at trace ``step``) or queues."""
        vm = self.vms[name]
        migration = links.Migration(name, self.location[name], destination,
                                    vm.flavor.memory_mb, now)
        self._claim(vm, destination)
        self.inflight[name] = migration
        self.links.add(migration, self.vm_cores(vm, step))
        return migration

    def next_end(self) -> float:
        """When the next migration ends, as the links run now."""
        return self.links.next_end()

    def finish_migrations(self, now: float, step) -> list:
        """Complete the migrations that end by ``now``, in order; the
        copies they let out of a queue start with the loads of trace
        ``step``."""
        done = self.links.advance(
            now, lambda m: self.vm_cores(self.vms[m.vm], step))
        for migration in done:
            vm = self.vms[migration.vm]
            self._release(vm, migration.source)
            self.location[vm.name] = migration.destination
            self.residents[migration.source].discard(vm.name)
            self.residents[migration.destination].add(vm.name)
            del self.inflight[vm.name]
        return done

    def instances_on(self, host: str) -> list:
        """The instances on ``host``, those migrating off it included."""
        return [name for name, where in self.location.items()
                if where == host]

    def inflight_by_host(self) -> dict:
        counts = {}
        for migration in self.inflight.values():
            for host in (migration.source, migration.destination):
                counts[host] = counts.get(host, 0) + 1
        return counts

    def host_cores(self, step, since: float | None = None,
                   until: float | None = None, ended=()) -> dict:
        """CPU used on each host at a trace step, in cores.

        Each instance counts on the host it is on.  With a sampling
        window from ``since`` to ``until``, a copy that ran during it (in
        flight now, or among ``ended`` since) also counts on the host the
        instance is not on now (its destination while in flight, its
        source once over), for the share of the window it ran: while a
        copy runs, both hosts carry the instance.  A queued migration
        copies nothing yet.
        """
        cores = dict.fromkeys(self.hosts, 0.0)
        vms, load = self.vms, self.vm_cores
        for name, host in self.location.items():
            cores[host] += load(vms[name], step)
        if since is None or until <= since:
            return cores
        span = until - since
        for migration, host in itertools.chain(
                ((m, m.destination) for m in self.inflight.values()),
                ((m, m.source) for m in ended)):
            if migration.copying is None:
                continue
            end = until if migration.end is None else migration.end
            ran = min(end, until) - max(migration.copying, since)
            if ran > 0:
                cores[host] += load(vms[migration.vm], step) * ran / span
        return cores

    def vm_cores(self, vm: VM, step) -> float:
        """The trace's percent of the VM's own vCPUs, in cores."""
        return step[vm.index] * vm.flavor.vcpus / 100.0

    def memory_percent(self, host: str) -> float:
        """RAM held on the host (incoming migrations included), percent."""
        return 100.0 * self.used_memory_mb[host] / self.spec.host_memory_mb


class CapacityCandidates:
    """The simulator's CandidatesFn: CoreFilter and RamFilter on the model.

    Valid for one period's allocations (make a new one after migrations
    start or end).  The answer depends only on the flavor, so it is computed
    once per flavor: planning stays cheap on a thousand hosts.  Each host's
    room is reported as placement would (``Candidates.room``), so that the
    planner counts what its own moves of the period take.
    """

    def __init__(self, cluster: Cluster):
        self._cluster = cluster
        self._by_flavor = {}
        self._room = None

    def _for_flavor(self, vm: VM) -> tuple:
        if vm.flavor not in self._by_flavor:
            allowed, rejected = [], []
            for host in self._cluster.hosts:
                rejection = self._cluster.rejection(vm, host)
                if rejection is None:
                    allowed.append(host)
                else:
                    rejected.append(rejection)
            self._by_flavor[vm.flavor] = (allowed, rejected)
        return self._by_flavor[vm.flavor]

    def room(self) -> dict:
        """Every host's free vCPUs and MB within its allocation ratios."""
        if self._room is None:
            cluster = self._cluster
            self._room = {host: {
                'VCPU': int(cluster.vcpu_limit - cluster.used_vcpus[host]),
                'MEMORY_MB': int(cluster.memory_limit
                                 - cluster.used_memory_mb[host])}
                for host in cluster.hosts}
        return self._room

    def __call__(self, inst: model.InstanceSnapshot,
                 snapshot: model.Snapshot) -> model.Candidates:
        vm = self._cluster.vms[inst.uuid]
        allowed, rejected = self._for_flavor(vm)
        return model.Candidates(
            allowed=tuple(h for h in allowed if h != inst.host),
            rejected=tuple(r for r in rejected if r.subject != inst.host),
            room=self.room(),
            request={'VCPU': vm.flavor.vcpus,
                     'MEMORY_MB': vm.flavor.memory_mb})
