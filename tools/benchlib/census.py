"""The objects Python's garbage collector tracks, counted by type.
"""

import collections
import gc
import sys

import tabulate


def census(top=12):
    """``(total, [(type, count)])``: the objects Python's collector tracks
    (what a full collection walks, frozen ones excepted), by type."""
    counts = collections.Counter(
        f'{type(obj).__module__}.{type(obj).__qualname__}'
        for obj in gc.get_objects())
    return sum(counts.values()), counts.most_common(top)


def print_census(title, top=12):
    total, common = census(top)
    print(f'{title}: {total} objects tracked by the garbage collector, '
          f'{gc.get_freeze_count()} frozen; most common types:\n'
          + tabulate.tabulate(common, headers=['type', 'count'],
                              tablefmt='github'), file=sys.stderr)
