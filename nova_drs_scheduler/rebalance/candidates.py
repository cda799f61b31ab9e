"""The live candidates callback: where may Nova move this instance?

It asks the same questions, in the same order, as a live migration with no
host would: the instance's RequestSpec (flavor, image, server group, AZ),
Nova's request filters, placement's allocation candidates, then every
enabled scheduler filter.  Filters run one at a time so each rejected host
is attributed to the filter that rejected it; the planner only ever picks
among the hosts that passed, and the migration is still re-validated by
Nova when it starts.  The weighers are not run: the planner chooses among
the allowed hosts by its own policy, as Nova ignores weights for a
requested host.

One callback serves one period, and placement is asked once per distinct
query of that period (instances of one flavor and the same traits and
aggregates share it): nothing the period plans is claimed in placement
before the period ends, so a second identical query would get the same
answer, minus what other schedulers claimed meanwhile, which the filters
and Nova's own checks at the move's start catch anyway.  The answer
carries each host's room from placement's provider summaries, and the
planner takes off it what the period's earlier moves take
(:mod:`~nova_drs_scheduler.planning.capacity`).

Moves planned earlier in the same period are not in Nova's database yet,
and Nova's compute-side check would refuse a second server-group member
on a host the first is still migrating to (the instance then ends in
ERROR).  So the filters are asked as if those moves were done: the group's host
list (affinity) and the host states' instances (anti-affinity) are
updated first.
"""

import copy

from nova import exception
from nova import objects
from nova.scheduler import request_filter
from nova.scheduler import utils as scheduler_utils
from oslo_log import log as logging

from nova_drs_scheduler import pacing
from nova_drs_scheduler.planning import model

LOG = logging.getLogger(__name__)


class PlacementUnavailableError(Exception):
    """Placement gave no answer: unreachable, bad credentials or an error.

    Not "no candidate": a period planned on it would read every
    destination as full, so the period is skipped instead.
    """


class LiveCandidates:
    """A :data:`~nova_drs_scheduler.planning.model.CandidatesFn` over
    Nova's live scheduler state."""

    def __init__(self, context, host_manager, placement_client, instances):
        """``instances``: {uuid: live.InstanceRow} of this period."""
        self.context = context
        self.host_manager = host_manager
        self.placement_client = placement_client
        self.instances = instances
        #: {placement query: (allocation requests by provider uuid,
        #: provider uuids)}, this period's answers.
        self._answers = {}

    def __call__(self, inst: model.InstanceSnapshot,
                 snapshot: model.Snapshot) -> model.Candidates:
        others = [name for name in snapshot.hosts if name != inst.host]
        try:
            spec = self._request_spec(inst)
            request_filter.process_reqspec(self.context, spec)
        except exception.NovaException as exc:
            return _all_rejected(others, 'RequestSpec', str(exc))
        # Pools are set only where aggregate mode applies (the snapshot
        # builder's job), so equal pools is the whole aggregate-mode rule.
        pool = snapshot.hosts[inst.host].pool
        rejected = [model.Rejection(name, 'drs_pool',
                                    f'pool {snapshot.hosts[name].pool}, '
                                    f'not the source\'s {pool}')
                    for name in others if snapshot.hosts[name].pool != pool]
        others = [name for name in others
                  if snapshot.hosts[name].pool == pool]
        try:
            states, placement_rejected, room, request = (
                self._placement_hosts(spec, others))
        except exception.NovaException as exc:
            return _all_rejected(others, 'placement', str(exc), rejected)
        rejected += placement_rejected
        planned = [move for move in snapshot.planned
                   if move.instance != inst.uuid]
        if planned:
            group_after(spec.instance_group, planned, snapshot)
            for state in states:
                instances_after(state, planned)
        for filter_ in self.host_manager.enabled_filters:
            pacing.pause()
            passed = self.host_manager.filter_handler.get_filtered_objects(
                [filter_], states, spec, 0)
            passed = list(passed or ())
            name = type(filter_).__name__
            kept = {id(state) for state in passed}
            rejected += [model.Rejection(state.host, name)
                         for state in states if id(state) not in kept]
            states = passed
        return model.Candidates(allowed=[state.host for state in states],
                                rejected=rejected, room=room,
                                request=request)

    def _request_spec(self, inst: model.InstanceSnapshot):
        """The instance's spec as the conductor prepares a live migration."""
        found = self.instances[inst.uuid]
        spec = objects.RequestSpec.get_by_instance_uuid(
            self.context, inst.uuid)
        spec.reset_forced_destinations()
        spec.ignore_hosts = [inst.host]
        spec.instance_uuid = inst.uuid
        spec.requested_destination = objects.Destination(cell=found.cell)
        scheduler_utils.setup_instance_group(self.context, spec)
        spec.ensure_project_and_user_id(found.nova)
        spec.ensure_network_information(found.nova)
        return spec

    def _placement_hosts(self, spec, names):
        """HostStates of ``names`` with allocation candidates, the
        rejections, each host's room and the instance's request.

        The candidates are attached to each HostState as the scheduler
        does, for the filters that prune them (NUMA, PCI).
        """
        resources = scheduler_utils.resources_from_request_spec(
            self.context, spec, self.host_manager,
            enable_pinning_translate=True)
        by_provider, summaries = self._allocation_candidates(resources)
        providers = list(summaries or by_provider)
        states = []
        if by_provider:
            all_states = self.host_manager.get_host_states_by_uuids(
                self.context, providers, spec)
            wanted = set(names)
            for state in pacing.paced(all_states):
                if state.host in wanted and state.uuid in by_provider:
                    state.allocation_candidates = copy.deepcopy(
                        by_provider[state.uuid])
                    states.append(state)
        states.sort(key=lambda state: state.host)
        found = {state.host for state in states}
        rejected = [model.Rejection(name, 'placement',
                                    'no allocation candidate in its cell')
                    for name in names if name not in found]
        return (states, rejected, room_by_host(states, summaries),
                resources.merged_resources())

    def _allocation_candidates(self, resources) -> tuple[dict, dict]:
        """Placement's answer to ``resources``, asked once per period and
        query: ``({provider uuid: [allocation request]}, provider
        summaries)``.
        """
        query = resources.to_querystring()
        if query in self._answers:
            return self._answers[query]
        # A query as costly as a request's own: not begun while one is in
        # flight.
        pacing.pause()
        # Nova's client logs the failure and answers None (or a tuple of
        # Nones) for an unreachable placement or an error status.
        result = self.placement_client.get_allocation_candidates(
            self.context, resources)
        alloc_reqs, summaries, _version = result or (None, None, None)
        if alloc_reqs is None:
            raise PlacementUnavailableError(
                'placement did not answer the allocation candidates query '
                '(unreachable, bad [placement] credentials or an error '
                'status; the scheduler log has the details)')
        by_provider = {}
        for request in alloc_reqs or ():
            for provider in request['allocations']:
                by_provider.setdefault(provider, []).append(request)
        self._answers[query] = (by_provider, summaries or {})
        return self._answers[query]


def room_by_host(states, summaries: dict) -> dict:
    """Each host's free room by resource class, from placement's provider
    summaries (capacity, with allocation ratios and reserved amounts,
    less usage), summed over the host's provider tree."""
    by_root = {}
    for uuid, summary in summaries.items():
        root = summary.get('root_provider_uuid') or uuid
        room = by_root.setdefault(root, {})
        for rc, amounts in summary.get('resources', {}).items():
            free = amounts['capacity'] - amounts['used']
            room[rc] = room.get(rc, 0) + free
    return {state.host: by_root[state.uuid] for state in states
            if state.uuid in by_root}


def group_after(group, planned, snapshot: model.Snapshot) -> None:
    """Set ``group.hosts`` as it will be once ``planned`` moves are done.

    A member's source stays in the list while another member remains
    there; ``snapshot.instances`` tells where the others are.
    """
    if group is None:
        return
    members = set(group.members or ())
    moved = {move.instance: move for move in planned
             if move.instance in members}
    if not moved:
        return
    staying = {inst.host for inst in snapshot.instances
               if inst.uuid in members and inst.uuid not in moved}
    hosts = set(group.hosts or ())
    hosts -= {move.source for move in moved.values()} - staying
    hosts |= {move.destination for move in moved.values()}
    group.hosts = sorted(hosts)


def instances_after(state, planned) -> None:
    """Set ``state.instances`` as it will be once ``planned`` moves are
    done.  A new dict: the state's may be shared with the host manager."""
    leaving = {move.instance for move in planned if move.source == state.host}
    arriving = [move.instance for move in planned
                if move.destination == state.host]
    if not leaving and not arriving:
        return
    instances = {uuid: instance for uuid, instance in state.instances.items()
                 if uuid not in leaving}
    for uuid in arriving:
        instances.setdefault(uuid, objects.Instance(uuid=uuid))
    state.instances = instances


def _all_rejected(names, rule: str, detail: str,
                  earlier=()) -> model.Candidates:
    LOG.warning('DRS cannot list destinations: %s', detail)
    return model.Candidates(
        allowed=[], rejected=[*earlier, *(
            model.Rejection(name, rule, detail) for name in names)])
