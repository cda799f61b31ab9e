"""The interface every rebalancer metric source implements.

A source answers two questions each period, for the hosts and instances the
caller asks about, and nothing else: it keeps no window and judges nothing
(that is :mod:`nova_drs_scheduler.planning.metrics`).  Sources are loaded
by :func:`nova_drs_scheduler.rebalance.sources.load` with the service's
``ConfigOpts`` as only argument.  A source must not raise for one bad host
or instance: it leaves it out of its answer, so a partial outage degrades
to "not judged" for the hosts concerned instead of a failed period.
"""

import abc
import dataclasses
from collections.abc import Mapping
from collections.abc import Sequence

from nova_drs_scheduler import deadline
from nova_drs_scheduler.planning.metrics import HostSample


@dataclasses.dataclass(frozen=True)
class Measured:
    """Instance loads measured within a deadline."""

    #: {instance uuid: CPU cores}, as :meth:`MetricsSource.instance_loads`.
    loads: Mapping[str, float]
    #: Hosts with an instance whose measurement was still running at the
    #: deadline: not measured in time.
    late: frozenset = frozenset()
    #: {instance uuid: cores waiting for a CPU}, as
    #: :meth:`MetricsSource.instance_waits`.
    waits: Mapping[str, float] = dataclasses.field(default_factory=dict)


class MetricsSource(abc.ABC):

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def host_samples(self, context,
                     hosts: Sequence[str]) -> Mapping[str, HostSample]:
        """The latest sample of each host in ``hosts`` (compute host names).

        Hosts without a sample are left out.  Timestamps are seconds on the
        Unix epoch; staleness is judged by the caller against
        ``[drs] metrics_max_age``, not here.
        """

    def host_samples_of(self, context, hosts: Mapping
                        ) -> Mapping[str, HostSample]:
        """:meth:`host_samples` of the hosts in ``hosts``, a mapping of
        host name to :class:`~..live.HostRows` the period already read.

        A source that measures from Nova's own rows (the nova source: the
        compute node's metrics) overrides it to skip reading them again.
        """
        return self.host_samples(context, sorted(hosts))

    @abc.abstractmethod
    def instance_loads(self, context,
                       instances: Sequence) -> Mapping[str, float]:
        """CPU each instance uses now, in cores, keyed by instance uuid.

        ``instances`` are objects with at least ``uuid``, ``host`` and
        ``vcpus`` attributes (live, the period's
        :class:`~..live.InstanceRow` rows, whose ``nova`` is the Instance
        object and ``cell`` its cell).  Instances the source cannot
        measure are left out; the caller decides their fallback.
        """

    def instance_waits(self, context,
                       instances: Sequence) -> Mapping[str, float]:
        """Cores of each instance's demand that waited for a CPU (its
        vCPUs' wait time per second), keyed by instance uuid, as
        :meth:`instance_loads` is asked.  Instances not measured are left
        out; this default, for sources that cannot see it, measures none.
        """
        return {}

    def instance_loads_within(self, context, instances: Sequence,
                              timeout: float | None) -> Measured:
        """:meth:`instance_loads` under a deadline of ``timeout`` seconds.

        This default runs the whole call, and :meth:`instance_waits`, in
        a worker: late, every host of ``instances`` is late.  A source
        that measures host by host (the nova source's diagnostics RPC)
        overrides it to give up only on the hosts that did not answer in
        time.
        """
        done, late = deadline.gather(
            {'instance_loads': lambda: (
                self.instance_loads(context, instances),
                self.instance_waits(context, instances))}, timeout)
        if late:
            return Measured({}, frozenset(i.host for i in instances))
        loads, waits = done['instance_loads']
        return Measured(loads, waits=waits)


class MetricsUnavailable(Exception):  # noqa: N818 - used by name
    """The source cannot answer this period at all (server down, timeout).

    The period is then skipped: no host is judged on missing data and no
    move is made.  Per-host gaps are not this: leave those hosts out.
    """
