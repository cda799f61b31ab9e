"""Builders for hand-made planner snapshots (no Nova: the simulator tests
use them in the Watcher virtualenv too)."""

from nova_drs_scheduler.planning import model


def host(name, cpu, ram=None, counter=0, vcpus=10, memory_mb=10000,
         **kwargs):
    return model.HostSnapshot(name=name, vcpus=vcpus, memory_mb=memory_mb,
                              cpu_percent=cpu, ram_percent=ram,
                              counter=counter, **kwargs)


def instance(uuid, host_name, cores, memory_mb=1000, vcpus=2, **kwargs):
    return model.InstanceSnapshot(uuid=uuid, host=host_name, vcpus=vcpus,
                                  memory_mb=memory_mb, cpu_cores=cores,
                                  **kwargs)


def snapshot(hosts, instances, inflight_by_host=None, inflight_total=0,
             **config):
    return model.Snapshot(
        hosts={h.name: h for h in hosts}, instances=tuple(instances),
        config=model.PlannerConfig(**config),
        inflight_by_host=inflight_by_host or {},
        inflight_total=inflight_total)


def allow_all(instance, snap):
    """Candidates callback allowing every host but the source."""
    return model.Candidates(
        allowed=[name for name in sorted(snap.hosts)
                 if name != instance.host])


def allow_except(rejected_by_filter):
    """Candidates callback where a named filter rejects some hosts."""
    def candidates(instance, snap):
        allowed = [name for name in sorted(snap.hosts)
                   if name != instance.host
                   and name not in rejected_by_filter]
        rejected = [model.Rejection(name, rule)
                    for name, rule in sorted(rejected_by_filter.items())]
        return model.Candidates(allowed=allowed, rejected=rejected)
    return candidates


def allow_with_room(rooms):
    """Candidates callback allowing every host but the source, with
    ``rooms`` ({host: free MB}; a host missing: not reported) as placement
    reports them, and 64 VCPU free on each."""
    def candidates(instance, snap):
        allowed = [name for name in sorted(snap.hosts)
                   if name != instance.host]
        return model.Candidates(
            allowed=allowed,
            room={name: {'MEMORY_MB': rooms[name], 'VCPU': 64}
                  for name in allowed if name in rooms},
            request={'MEMORY_MB': instance.memory_mb,
                     'VCPU': instance.vcpus})
    return candidates


def fresh(text):
    """``text`` as a new string object, as read from nova.conf or the
    database: equal to a literal, never identical to it."""
    return ''.join(list(text))
