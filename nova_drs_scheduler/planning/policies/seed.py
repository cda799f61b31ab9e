"""The seed policy: the first users' algorithm, kept exactly as a baseline.

A violated host moves its least-loaded instance (lowest CPU in cores; ties
by uuid) to the allowed host whose CPU utilization after the migration is
lowest (ties by host name).  No margin, no minimum improvement, no memory
of the hosts an instance left, no cost-benefit rule, one move per violated
host per period.  The planner still applies the rails every policy gets:
blocked instances, limits, pools, stale and non-schedulable hosts.
"""

from nova_drs_scheduler.planning.policies import base


class SeedPolicy(base.Policy):
    name = 'seed'
    #: The seed had no memory of past moves.
    no_return = False
    #: Nor any cost-benefit rule.
    weighs_benefit = False

    def rank(self, removals, config):
        if not removals:
            return []
        return [min(removals,
                    key=lambda r: (r.instance.cpu_cores, r.instance.uuid))]

    def destination(self, host, cpu, ram, config):
        return None, cpu

    def key(self, option, config):
        return (option.destination_cpu, option.destination.name,
                option.removal.instance.uuid)

    def describe(self, option, config):
        return (f'seed: least-loaded instance '
                f'({option.removal.instance.cpu_cores:.2f} cores) to the '
                f'host with the lowest CPU after the move '
                f'({option.destination_cpu:.1f}%)')
