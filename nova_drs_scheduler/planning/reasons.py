"""How the planner's reasons and notes read: loads and counted rules."""

import collections


def fmt(label: str, cpu: float, ram: float | None) -> str:
    text = f'{label} cpu {cpu:.1f}%'
    return text if ram is None else f'{text}, ram {ram:.1f}%'


def failures(failed: list) -> str:
    """``(uuid, Counter of rules)`` per instance refused, for a note."""
    return '; '.join(f'instance {uuid}: {summary(rules)}'
                     for uuid, rules in failed)


def summary(rules: collections.Counter) -> str:
    if not rules:
        return 'no allowed destination'
    return ', '.join(f'{count}x {rule}'
                     for rule, count in sorted(rules.items()))
