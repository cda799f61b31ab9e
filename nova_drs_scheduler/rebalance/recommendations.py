"""Recommend-and-approve, as VMware DRS's partially automated mode.

Under ``manual`` automation (``[drs] automation`` or an aggregate's
``drs_automation``) a planned move becomes a *pending* recommendation in
the DRS database.  Each period the leader re-validates the open ones: a
recommendation whose instance left its source, or whose source is no
longer over its threshold, *expires*.  An operator approves one
(``nova-drs apply``) or dismisses it (``nova-drs dismiss``); the leader
starts approved ones at its next period, through the same rails as its own
moves: the in-flight limits, the instance's blockers (cooldown,
quarantine, opt-out), Nova's filters on the destination, then Nova's own
live migration (re-validated by the conductor, claimed in placement).
"""

import dataclasses

from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import model


def migrations(store: db_store.Store, states) -> list[dict]:
    """The recommendations in ``states`` that move an instance (power
    recommendations, :mod:`.standby`'s, have an ``action``)."""
    return [rec for rec in store.recommendations(states)
            if not rec.get('action')]


def revalidate(store: db_store.Store, snapshot: model.Snapshot) -> None:
    """Expire the open recommendations whose reason no longer holds."""
    hosts = {inst.uuid: inst.host for inst in snapshot.instances}
    for rec in migrations(store, (db_store.PENDING, db_store.APPROVED)):
        why = _gone(rec, snapshot.hosts, hosts)
        if why:
            store.transition(rec['id'], db_store.EXPIRED,
                             (db_store.PENDING, db_store.APPROVED), why)


def _gone(rec: dict, hosts, instance_hosts) -> str | None:
    source = rec['source']
    if instance_hosts.get(rec['instance']) != source:
        return f'the instance is no longer on {source}'
    if not getattr(hosts.get(source), 'counter', 0):
        return f'{source} is no longer over its threshold'
    return None


def approved(store: db_store.Store, snapshot: model.Snapshot,
             candidates: model.CandidatesFn) -> list[tuple[int, model.Move]]:
    """The approved recommendations to start now, as moves.

    One that breaks a rail for good (instance blocked, destination refused
    by Nova's filters or not a fit) fails with the reason; one held back
    by an in-flight limit stays approved for a later period.
    """
    config = snapshot.config
    instances = {inst.uuid: inst for inst in snapshot.instances}
    busy = dict(snapshot.inflight_by_host)
    total = snapshot.inflight_total
    chosen = []
    for rec in migrations(store, (db_store.APPROVED,)):
        inst = instances[rec['instance']]  # revalidate() kept it there.
        if (len(chosen) >= config.max_migrations_per_period or
                total >= config.max_concurrent_migrations):
            break
        if max(busy.get(rec['source'], 0), busy.get(
                rec['destination'], 0)) >= (
                config.max_concurrent_migrations_per_host):
            continue
        why = _refused(inst, rec['destination'], snapshot, candidates)
        if why:
            store.transition(rec['id'], db_store.FAILED,
                             (db_store.APPROVED,), why)
            continue
        for host in (rec['source'], rec['destination']):
            busy[host] = busy.get(host, 0) + 1
        total += 1
        chosen.append((rec['id'], model.Move(
            instance=inst.uuid, source=rec['source'],
            destination=rec['destination'],
            reason=f'approved recommendation {rec["id"]}: {rec["reason"]}',
            expected={}, memory_mb=inst.memory_mb)))
    return chosen


def _refused(inst: model.InstanceSnapshot, destination: str,
             snapshot: model.Snapshot, candidates) -> str | None:
    if inst.blocked:
        return f'instance not movable now: {inst.blocked}'
    host = snapshot.hosts.get(destination)
    if (host is None or host.excluded or host.automation_off
            or not host.schedulable):
        return f'{destination} is not a schedulable DRS host'
    if host.cpu_percent is None or host.counter:
        return f'{destination} is over its threshold or not measured'
    if destination in inst.left:
        return f'the instance left {destination} recently (no_return_time)'
    found = candidates(inst, snapshot)
    if destination not in found.allowed:
        rules = ', '.join(r.rule for r in found.rejected
                          if r.subject == destination)
        return f'{destination} refused by {rules or "the scheduler"}'

    return None


def reserve(snapshot: model.Snapshot,
            moves: list[tuple[int, model.Move]]) -> model.Snapshot:
    """The snapshot with the approved moves counted as in flight, so the
    planner's limits include them."""
    busy = dict(snapshot.inflight_by_host)
    for _ident, move in moves:
        for host in (move.source, move.destination):
            busy[host] = busy.get(host, 0) + 1
    moved = {move.instance for _ident, move in moves}
    instances = [dataclasses.replace(inst, blocked='approved move starting',
                                     transient=True)
                 if inst.uuid in moved else inst
                 for inst in snapshot.instances]
    return dataclasses.replace(
        snapshot, instances=instances, inflight_by_host=busy,
        inflight_total=snapshot.inflight_total + len(moves))
