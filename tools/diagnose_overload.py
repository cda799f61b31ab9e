#!/usr/bin/env python3
"""Where a policy's overloaded host-periods come from, one by one.

Replays a trace under one of our policies (the production planner, as
``nova-drs simulate`` does) and classifies every overloaded host-period
(a host's measured CPU above ``[drs] cpu_threshold`` in a period, the
simulator's first metric) by what the planner recorded:

- ``first: ...``: the first period of an overload episode (the host was
  not over in the period before), which a reactive planner cannot prevent;
  ``after an arrival`` when the simulator counts it DRS-caused (the host
  would not be over without the instances whose migration to it ended
  within ``--arrival-periods``, ``scoring.Arrivals``), otherwise by where
  it came from (within ``margin`` of its threshold in the period before,
  or below that);
- ``no move: ...``: a later period of an episode, when the plan of the
  period before moved nothing off the host, by the reason its note gives
  (a rate limit, no movable instance, or the rules that refused every
  destination of every instance scored);
- ``moved: ...``: a later period when the plan of the period before did
  move load off the host: cured in projection (to its threshold minus
  ``margin``, or only under its threshold) but the load rose, or a
  partial relief and why no further move was planned.

It also counts the planned moves made inside the margin (the ``balanced``
policy's second stage, in a warm pool or off a starved host,
``expected['inside_margin']``), and those past the destination's
threshold (its last stage, off a host far past its CPUs,
``expected['past_threshold']``).

Run in the simulator's virtualenv (``tox -e bench-rebalance``'s, or any
with the package installed), with the simulator's own options::

    python tools/diagnose_overload.py --seeds 1,2 -- --trace FILE --bursts
"""

import argparse
import collections
import dataclasses
import json
import re
import sys

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import engine
from nova_drs_scheduler.simulate import strategies

_NOTE = re.compile(r'^host (?P<host>\S+): (?P<head>violated, no move|still '
                   r'projected over after \d+ move\(s\), no further move): '
                   r'(?P<detail>.*)$')
#: Where a note gives the refusals of the second stage, inside the
#: margin, and of the last, past the threshold.
_INSIDE = '; inside the margin: '
_PAST = '; past the threshold: '
#: Instance names may hold spaces; rules do not.
_INSTANCE = re.compile(r'^instance .+?: (?P<rules>\d+x \S+(?:, \d+x \S+)*|'
                       r'no allowed destination)$')
_RULE = re.compile(r'^(\d+)x (\S+)$')
#: Rules of Nova's filters (the simulator's capacity model) and hosts that
#: are no destination whatever the move: not what held a move back.
_BACKGROUND = frozenset({'CoreFilter', 'RamFilter', 'violated', 'excluded',
                         'pool', 'unaggregated', 'no-capacity',
                         'stale-metrics', 'not-schedulable'})


def reason(detail: str) -> str:
    """A planner note's detail (after ``no move:``) in a few words.

    A rate limit or the lack of a movable instance is named as such;
    otherwise the note lists, per instance scored, the rules that refused
    its destinations.  When every instance was refused for too small a
    gain, that is the reason; else it is the set of planner rules that
    refused the others (Nova's filters and violated hosts left out), e.g.
    ``no destination: margin+no-return``, or ``none allowed`` when only
    those refused them.  When the pool was warm and the second pass, inside
    the margin, found nothing either, its rules follow:
    ``no destination: margin; inside it: came-from+graded-margin``; and
    so for the last stage, past the threshold (``past it: near-full``).
    """
    if _PAST in detail:
        before, past = detail.split(_PAST, 1)
        return (f'{reason(before)}; past it: '
                f'{reason(past).removeprefix("no destination: ")}')
    if _INSIDE in detail:
        outside, inside = detail.split(_INSIDE, 1)
        return (f'{reason(outside)}; inside it: '
                f'{reason(inside).removeprefix("no destination: ")}')
    if detail.startswith('limit:'):
        return detail
    if detail.startswith('no movable instance'):
        return 'no movable instance'
    small = {'min-improvement'}
    per_instance = []
    for entry in detail.split('; '):
        match = _INSTANCE.match(entry)
        if not match:
            return detail
        per_instance.append({
            found.group(2) for found in map(
                _RULE.match, match.group('rules').split(', '))
            if found and found.group(2) not in _BACKGROUND})
    if all(rules == small for rules in per_instance):
        return 'every instance below min-improvement'
    rules = set().union(*(r for r in per_instance if r != small))
    return 'no destination: ' + ('+'.join(sorted(rules)) or 'none allowed')


@dataclasses.dataclass
class _Period:
    """What one period left for the next to explain."""

    over: set
    plan: model.Plan
    #: Host -> note detail of the plan, by host.
    notes: dict


class Recorder(strategies.PlannerStrategy):
    """The production planner, classifying each overloaded host-period."""

    def __init__(self, config: model.PlannerConfig, policy: str):
        super().__init__(config, policy)
        self.counts = collections.Counter()
        self.episodes = collections.Counter()
        #: Planned moves, those made inside the margin, and those past
        #: the destination's threshold.
        self.moves = collections.Counter()
        self._last = None
        self._length = collections.Counter()

    def plan(self, view) -> tuple:
        result, built, decided = self.decide(view)
        self._classify(view)
        self.moves['planned'] += len(result.moves)
        self.moves['inside the margin'] += sum(
            bool(m.expected.get('inside_margin')) for m in result.moves)
        self.moves['past the threshold'] += sum(
            bool(m.expected.get('past_threshold')) for m in result.moves)
        notes = {}
        for note in result.notes:
            match = _NOTE.match(note)
            if match:
                notes[match.group('host')] = match.group('detail')
        threshold = self.config.cpu_threshold
        self._last = _Period(
            {h for h in view.cluster.hosts
             if view.host_history[h][-1] > threshold}, result, notes)
        return list(result.moves), built, decided

    def _classify(self, view) -> None:
        threshold = self.config.cpu_threshold
        last = self._last
        for host in view.cluster.hosts:
            cpu = view.host_history[host][-1]
            if cpu <= threshold:
                if self._length[host]:
                    self.episodes[self._length.pop(host)] += 1
                continue
            self._length[host] += 1
            if last is None or host not in last.over:
                kind = self._first(view, host, cpu)
            else:
                kind = self._later(view, host, last)
            self.counts[kind] += 1

    def _first(self, view, host: str, cpu: float) -> str:
        threshold = self.config.cpu_threshold
        if host in view.drs_caused:
            return 'first: after an arrival'
        before = view.host_history[host]
        if (len(before) > 1
                and before[-2] > threshold - self.config.margin):
            return 'first: from within margin'
        return 'first: from below margin'

    def _later(self, view, host: str, last: _Period) -> str:
        moves = [m for m in last.plan.moves if m.source == host]
        if not moves:
            return 'no move: ' + reason(last.notes.get(host, 'not violated'))
        if any(view.cluster.location[m.instance] != m.destination
               for m in moves):
            return 'moved: refused at start'
        projected = moves[-1].expected['source_cpu']
        if projected <= self.config.cpu_threshold - self.config.margin:
            return 'moved: cured with margin in projection, load rose'
        if projected <= self.config.cpu_threshold:
            return 'moved: cured within margin in projection, load rose'
        return 'moved: partial, then ' + reason(last.notes.get(host, '?'))

    def finish(self) -> None:
        """Close the episodes still open at the end of the trace."""
        for length in self._length.values():
            self.episodes[length] += 1
        self._length.clear()


def diagnose(argv: list, policy: str, arrival_periods: int) -> dict:
    """One replay of ``argv`` (the simulator's options): the counts."""
    setup = cli.prepare(cli.parser().parse_args(argv))
    recorder = Recorder(setup.config, policy)
    settings = dataclasses.replace(setup.settings,
                                   arrival_periods=arrival_periods)
    result = engine.run(setup.trace, setup.vms, setup.spec, recorder,
                        settings)
    recorder.finish()
    summary = result.card.summary()
    if sum(recorder.counts.values()) != summary['overloaded_host_periods']:
        raise RuntimeError('classified host-periods do not add up to the '
                           'scorecard\'s overloaded host-periods')
    return {'run': cli.describe(cli.parser().parse_args(argv)),
            'summary': summary, 'counts': dict(recorder.counts),
            'moves': dict(recorder.moves),
            'episodes': {str(k): v for k, v in
                         sorted(recorder.episodes.items())}}


def markdown(results: list) -> str:
    """Categories down, runs across; count and share of the run's total."""
    kinds = sorted({k for r in results for k in r['counts']})
    lines = ['| | ' + ' | '.join(r['label'] for r in results) + ' |',
             '|---|' + '---|' * len(results)]
    total = [r['summary']['overloaded_host_periods'] for r in results]
    lines.append('| overloaded host-periods / migrations | ' + ' | '.join(
        f"**{t}** / {r['summary']['migrations']}"
        for t, r in zip(total, results, strict=True)) + ' |')
    lines.append('| planned moves inside the margin | ' + ' | '.join(
        f"{r['moves']['inside the margin']} of {r['moves']['planned']}"
        for r in results) + ' |')
    lines.append("| of those, past the destination's threshold | "
                 + ' | '.join(str(r['moves'].get('past the threshold', 0))
                              for r in results) + ' |')
    lines.append('| DRS-caused (any period of an episode) | ' + ' | '.join(
        str(r['summary']['drs_caused_overloaded_host_periods'])
        for r in results) + ' |')
    for kind in kinds:
        cells = []
        for t, r in zip(total, results, strict=True):
            count = r['counts'].get(kind, 0)
            cells.append(f'{count} ({100.0 * count / t:.0f} %)' if t else '0')
        lines.append(f'| {kind} | ' + ' | '.join(cells) + ' |')
    lines.append('| episodes (of 1 period) | ' + ' | '.join(
        f"{sum(r['episodes'].values())} ({r['episodes'].get('1', 0)})"
        for r in results) + ' |')
    return '\n'.join(lines)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seeds', default='1',
                        help='Comma-separated seeds, one replay each.')
    parser.add_argument('--policy', default='balanced',
                        choices=strategies.PLANNER_POLICIES)
    parser.add_argument('--arrival-periods', type=int,
                        default=engine.Settings.arrival_periods,
                        help='An instance whose migration ended less than '
                             'this many periods ago counts as an arrival.')
    parser.add_argument('--label', default='seed {seed}',
                        help='Column heading; {seed} is replaced.')
    parser.add_argument('--json', help='Also write the counts here.')
    parser.add_argument('simulate', nargs='*',
                        help='The simulator\'s options, after "--".')
    args = parser.parse_args(argv)
    results = []
    for seed in (int(s) for s in args.seeds.split(',')):
        result = diagnose(args.simulate + ['--seed', str(seed)],
                          args.policy, args.arrival_periods)
        result['label'] = args.label.format(seed=seed)
        results.append(result)
    print(markdown(results))
    if args.json:
        with open(args.json, 'w') as stream:
            json.dump(results, stream, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
