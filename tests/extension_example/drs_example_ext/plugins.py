"""One plug-in of each kind, each the smallest useful implementation.

Every class here is found by name only: operators pick it in nova.conf,
nova-drs-scheduler loads it through the entry points in pyproject.toml.
"""

import os
import time

from nova.scheduler import filters
from nova.scheduler import host_manager
from nova.scheduler import weights

from nova_drs_scheduler import manager
from nova_drs_scheduler.planning.metrics import HostSample
from nova_drs_scheduler.planning.policies import seed
from nova_drs_scheduler.power import base as power_base
from nova_drs_scheduler.rebalance.sources import base


class ExampleAvoidFilter(filters.BaseHostFilter):
    """Reject hosts in an aggregate with metadata ``example_avoid=true``."""

    def host_passes(self, host_state, spec_obj):
        return not any(agg.metadata.get('example_avoid') == 'true'
                       for agg in host_state.aggregates)


class ExampleNameWeigher(weights.BaseHostWeigher):
    """Prefer the host whose name sorts last (host3 over host1)."""

    def _weigh_object(self, host_state, weight_properties):
        return float(sum(ord(c) * 256 ** -i
                         for i, c in enumerate(host_state.host)))


class ExampleHotSource(base.MetricsSource):
    """Hosts named ``hot*`` run at 95% CPU, others at 10%; each instance
    uses half of its vCPUs."""

    def host_samples(self, context, hosts):
        now = time.time()
        return {host: HostSample(
            timestamp=now, cpu_percent=95.0 if host.startswith('hot')
            else 10.0) for host in hosts}

    def instance_loads(self, context, instances):
        return {inst.uuid: inst.vcpus / 2.0 for inst in instances}


class ExampleBusiestPolicy(seed.SeedPolicy):
    """The seed policy, but moving the busiest instance, not the least."""

    name = 'example_busiest'

    def rank(self, removals, config):
        if not removals:
            return []
        return [max(removals,
                    key=lambda r: (r.instance.cpu_cores, r.instance.uuid))]

    def describe(self, option, config):
        return 'example_busiest: the busiest instance of the host'


class ExampleHostManager(host_manager.HostManager):
    """Nova's host manager, counting the host-state requests it serves."""

    def __init__(self):
        super().__init__()
        self.requests = 0

    def get_host_states_by_uuids(self, *args, **kwargs):
        self.requests += 1
        return super().get_host_states_by_uuids(*args, **kwargs)


class ExampleSchedulerManager(manager.DRSSchedulerManager):
    """The DRS manager, marking the decision records it produces."""

    def run_rebalance(self, context):
        record = super().run_rebalance(context)
        record['driver'] = 'example_scheduler'
        return record


class ExampleFilePowerDriver(power_base.PowerDriver):
    """Keeps each host's power in a file under ``$state_path/example-power``:
    a stand-in for a power switch that a script or a test can read."""

    def __init__(self, conf):
        super().__init__(conf)
        self.folder = os.path.join(conf.state_path, 'example-power')
        os.makedirs(self.folder, exist_ok=True)

    def _write(self, host, state):
        with open(os.path.join(self.folder, host), 'w') as handle:
            handle.write(state)

    def power_on(self, host):
        self._write(host, power_base.ON)

    def power_off(self, host):
        self._write(host, power_base.OFF)

    def state(self, host):
        try:
            with open(os.path.join(self.folder, host)) as handle:
                return handle.read()
        except FileNotFoundError:
            return power_base.UNKNOWN
