"""Human tables by default, JSON on request: one place decides."""

import json
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


def short(uuid: str | None) -> str:
    return (uuid or '-')[:8]
