"""One request through a scheduler, its claim undone afterwards."""

import time

from benchlib.clocks import elapsed
from benchlib.cloud import request_spec

#: Requests of each scheduler whose latency is not counted (warm-up).
WARMUP = 5


def filter_and_weigh(manager, hosts, spec):
    return manager.get_weighed_hosts(
        manager.get_filtered_hosts(hosts, spec), spec)


def with_instance_info(scheduler, pushed):
    """``scheduler``, its host manager primed as computes would prime it."""
    scheduler.host_manager._instance_info = {
        host: {'instances': dict(instances), 'updated': True}
        for host, instances in pushed.items()}
    return scheduler


def timed_select(ctxt, scheduler, placement, timeline=None):
    """Seconds one ``select_destinations`` took; its claim is undone
    (and checked: a request that claimed nothing raises).

    ``timeline``: a :class:`Timeline` that keeps the request's interval.
    """
    spec = request_spec(ctxt)
    took = elapsed(scheduler.select_destinations, ctxt, spec_obj=spec,
                   instance_uuids=[spec.instance_uuid], return_objects=True,
                   return_alternates=True)
    if timeline is not None:
        end = time.perf_counter()
        timeline.requests.append((end - took, end))
    undone = placement.delete(f'/allocations/{spec.instance_uuid}')
    if undone.status != 204:
        raise RuntimeError(f'no claim to undo: {undone.status} {undone}')
    return took
