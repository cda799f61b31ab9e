"""Capacity counted per planned move, as placement counts it.

A candidates callback answers from placement as it stood when asked, and
nothing a period plans is claimed in placement before the moves start.  So
two moves planned into one host would both look as if they fit, and Nova
would refuse the second when it starts.  The callback reports each allowed
host's free room and the instance's request (``Candidates.room`` and
``request``); :func:`counted` takes off the room what the moves planned
earlier in the period (``Snapshot.planned``) take, and refuses the hosts
left too small with the rule :data:`RULE`.

Pure: the planner, the power planner's placement check and the simulator
share it.
"""

import collections
from collections.abc import Iterable
from collections.abc import Mapping

from nova_drs_scheduler.planning import model

#: The rule refusing a host without room once earlier moves are counted.
RULE = 'capacity'


def taken(planned: Iterable[model.Move]) -> dict:
    """Per destination, what ``planned`` moves take, by resource class."""
    took = collections.defaultdict(collections.Counter)
    for move in planned:
        took[move.destination].update(move.resources)
    return took


def shortfall(room: Mapping[str, int], took: Mapping[str, int],
              request: Mapping[str, int]) -> str:
    """Why ``request`` does not fit in ``room`` less ``took``; '' when it
    does."""
    short = []
    for rc, amount in sorted(request.items()):
        free = room.get(rc)
        if free is None:
            continue
        left = free - took.get(rc, 0)
        if amount > left:
            text = f'{rc} {amount} wanted, {free} free'
            if took.get(rc):
                text += (f' less {took[rc]} taken by moves planned '
                         f'earlier this period')
            short.append(text)
    return '; '.join(short)


def fit(found: model.Candidates,
        planned: Iterable[model.Move]) -> model.Candidates:
    """``found`` with the hosts the planned moves leave too small moved
    from ``allowed`` to ``rejected`` (:data:`RULE`)."""
    took = taken(planned)
    refused = {}
    for name in found.allowed:
        room = found.room.get(name)
        why = room is not None and shortfall(room, took.get(name, {}),
                                             found.request)
        if why:
            refused[name] = why
    if not refused:
        return found
    return model.Candidates(
        allowed=[name for name in found.allowed if name not in refused],
        rejected=[*found.rejected, *(model.Rejection(name, RULE, why)
                                     for name, why in refused.items())],
        room=found.room, request=found.request)


def counted(candidates: model.CandidatesFn) -> model.CandidatesFn:
    """``candidates`` with the moves planned so far counted (:func:`fit`)."""
    def call(instance: model.InstanceSnapshot,
             snapshot: model.Snapshot) -> model.Candidates:
        return fit(candidates(instance, snapshot), snapshot.planned)
    return call
