"""Human tables by default, JSON on request: one place decides."""

import json
import re
import sys

from tabulate import tabulate


def emit(args, data, tables) -> None:
    """Print ``data`` as JSON with ``--json``, else the human ``tables``.

    ``tables`` is a list of ``(title, headers, rows)``; an empty table
    prints its title and "(none)".
    """
    if args.json:
        json.dump(data, sys.stdout, indent=2, sort_keys=True, default=str)
        sys.stdout.write('\n')
        return
    for title, headers, rows in tables:
        if title:
            print(title)
        if rows:
            print(tabulate(rows, headers=headers, tablefmt='simple'))
        else:
            print('(none)')
        print()


def percent(value) -> str:
    return '-' if value is None else f'{value:.1f}'


def number(value) -> str:
    """A number to one decimal; '-' for None or anything else (records
    older than the field)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return '-'
    return f'{value:.1f}'


def duration(seconds: float | None) -> str:
    """``1m30s``, ``45s``; '-' for None."""
    if seconds is None:
        return '-'
    minutes, secs = divmod(int(round(seconds)), 60)
    return f'{minutes}m{secs:02d}s' if minutes else f'{secs}s'


def short(uuid: str | None) -> str:
    return (uuid or '-')[:8]


def server(uuid: str | None, names: dict) -> str:
    """A short UUID with the server's name beside it, when it has one."""
    name = names.get(uuid) if uuid else None
    return f'{short(uuid)} {name}' if name else short(uuid)


def natural(name: str) -> tuple:
    """Sort key putting host2 before host10."""
    return tuple((0, int(part), '') if part.isdigit() else (1, 0, part)
                 for part in re.split(r'(\d+)', name or ''))
