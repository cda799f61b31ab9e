"""``nova-drs maintenance plan HOST [HOST ...]``: draining hosts, planned
before any enters maintenance.

A dry run on the live period's snapshot (:func:`.cloud.maintenance_plan`),
decided by :mod:`.planning.drain_plan`: nothing moves, nothing is stored.
"""

import collections

from nova_drs_scheduler.cli import cloud
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import output
from nova_drs_scheduler.planning import drain
from nova_drs_scheduler.planning import drain_plan
from nova_drs_scheduler.planning import model


def plan_(args, conf) -> int:
    """Exit 0 when every host can drain at once, BLOCKED when not."""
    found = cloud.maintenance_plan(conf, args.hosts)
    document = to_dict(found)
    output.emit(args, document, tables(document))
    if not args.json:
        print(summary(document))
    return errors.OK if found.all_at_once else errors.BLOCKED


def to_dict(found: drain_plan.Assessment) -> dict:
    """The assessment as ``--json`` prints it."""
    names = {uuid: i.name for uuid, i in found.instances.items()}
    hosts = []
    for single in found.alone:
        [state] = single.drains
        hosts.append({
            'host': state.host, 'instances': state.instances,
            'can_drain': single.can_drain,
            'drain_seconds': round(single.seconds, 1),
            'moves': [_move(m, found.instances) for m in single.moves],
            'waiting': drain.rows(state.waiting, names),
            'blockers': drain.rows(state.blockers, names),
            'over': [_over(o) for o in single.over]})
    config = found.config
    return {
        'hosts': hosts,
        'at_once': {
            'hosts': list(found.together.hosts),
            'drain_seconds': round(found.together.seconds, 1),
            'moves': [_move(m, found.instances)
                      for m in found.together.moves],
            'left_out': [{'host': host, 'why': why}
                         for host, why in found.left_out]},
        'all_at_once': found.all_at_once,
        'pace': {
            'drain_max_concurrent_migrations_per_host':
                config.drain_max_concurrent_migrations_per_host,
            'destination_concurrency': config.drain_destination_concurrency,
            'migration_bandwidth': config.migration_bandwidth,
            'migration_dirty_rate': config.migration_dirty_rate}}


def _move(move: model.Move, instances) -> dict:
    instance = instances[move.instance]
    return {'instance': move.instance, 'name': instance.name,
            'source': move.source, 'destination': move.destination,
            'migration': move.migration, 'memory_mb': instance.memory_mb,
            'cpu_cores': instance.cpu_cores,
            'destination_cpu': _rounded(move.expected['destination_cpu']),
            'destination_ram': _rounded(move.expected.get('destination_ram')),
            'reason': move.reason}


def _over(over: drain_plan.Over) -> dict:
    return {'host': over.host, 'cpu_percent': _rounded(over.cpu_percent),
            'ram_percent': _rounded(over.ram_percent),
            'cpu_threshold': over.cpu_threshold,
            'ram_threshold': over.ram_threshold}


def _rounded(percent: float | None) -> float | None:
    return None if percent is None else round(percent, 2)


def tables(document: dict) -> list:
    """The human tables: each host alone, then the hosts at once."""
    hosts, at_once = document['hosts'], document['at_once']
    moved = collections.Counter(move['source'] for move in at_once['moves'])
    return [
        ('Hosts, each drained alone',
         ['host', 'instances', 'moves', 'waiting', 'blocking',
          'pushed over', 'drain time', 'can drain'],
         [[h['host'], h['instances'], len(h['moves']), len(h['waiting']),
           len(h['blockers']),
           ', '.join(o['host'] for o in h['over']) or '-',
           output.duration(h['drain_seconds']),
           'yes' if h['can_drain'] else 'no'] for h in hosts]),
        ('Moves, each host drained alone',
         ['host', 'server', 'to', 'migration', 'to cpu after',
          'to ram after'],
         [[h['host'], _server(m), m['destination'], m['migration'],
           output.percent(m['destination_cpu']),
           output.percent(m['destination_ram'])]
          for h in hosts for m in h['moves']]),
        ('Instances that stay, each host drained alone',
         ['host', 'server', 'outcome', 'why'],
         [[h['host'], _server(item), outcome, item['reason']]
          for h in hosts
          for outcome, key in (('blocks', 'blockers'), ('waits', 'waiting'))
          for item in h[key]]),
        ('Hosts pushed over a threshold, each host drained alone',
         ['drained host', 'host', 'cpu % after', 'cpu thr', 'ram % after',
          'ram thr'],
         [[h['host'], o['host'], output.percent(o['cpu_percent']),
           output.percent(o['cpu_threshold']),
           output.percent(o['ram_percent']),
           output.percent(o['ram_threshold'])]
          for h in hosts for o in h['over']]),
        ('At once', ['host', 'drains at once', 'moves', 'why not'],
         [[name, 'yes', moved[name], ''] for name in at_once['hosts']]
         + [[item['host'], 'no', '-', item['why']]
            for item in at_once['left_out']]),
    ]


def _server(item: dict) -> str:
    return output.server(item['instance'], {item['instance']: item['name']})


def summary(document: dict) -> str:
    """One line: the hosts that can drain at once, in about how long, at
    what pace."""
    at_once, pace = document['at_once'], document['pace']
    if not at_once['hosts']:
        return 'None of the hosts can drain: see above.'
    return (f'{", ".join(at_once["hosts"])} can drain at once in about '
            f'{output.duration(at_once["drain_seconds"])} '
            f'({pace["drain_max_concurrent_migrations_per_host"]} '
            f'migration(s) at a time off each host, '
            f'{pace["destination_concurrency"]} into each destination, '
            f'one {pace["migration_bandwidth"]:g} Mbit/s link per host).')
