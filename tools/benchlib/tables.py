"""Printing results as Markdown tables.
"""

import tabulate


def print_tables(tables, floatfmt='.2f'):
    """``[(title, rows, headers)]`` as Markdown tables."""
    for title, rows, headers in tables:
        print(f'{title}\n')
        print(tabulate.tabulate(rows, headers=headers, floatfmt=floatfmt,
                                tablefmt='github', missingval='-'))
        print()


def overlap_rows(results, measure):
    """Per scheduler (or condition), the slowest 5 % of requests against
    the rest: per label of what they overlapped (:class:`Timeline`), how
    many did and the mean ms of it inside one of the part's requests.
    Returns ``(rows, headers)``."""
    labels = sorted({key[1] for r in results
                     for s in r[measure]['overlaps'].values()
                     for key in s if key != 'slowest' and key[1] != 'n'})
    rows = []
    for r in results:
        for name, s in r[measure]['overlaps'].items():
            for part in ('slow', 'rest'):
                n = s.get((part, 'n'), [0])[0]
                cells = []
                for label in labels:
                    count, seconds = s.get((part, label), (0, 0.0))
                    cells.append(f'{count}: {seconds * 1000.0 / (n or 1):.1f}')
                rows.append([r['size'], name, part, n] + cells)
    return rows, ['N', 'who', 'requests', 'n'] + labels


def slowest_rows(results, measure):
    """Per scheduler (or condition), its five slowest requests and what
    they overlapped, the longest overlap first (ms)."""
    rows = []
    for r in results:
        for name, s in r[measure]['overlaps'].items():
            for took, found in s['slowest']:
                rows.append([r['size'], name, took, ', '.join(
                    f'{label} {ms:.0f}' for label, ms in sorted(
                        found.items(), key=lambda item: -item[1]))])
    return rows


def print_overlaps(results, measure):
    rows, headers = overlap_rows(results, measure)
    print_tables([
        ('What the requests overlapped (slow: the slowest 5 %; each cell: '
         'how many of them overlapped it: the mean ms of it inside one '
         'of them):', rows, headers),
        ('The five slowest requests and what they overlapped (ms):',
         slowest_rows(results, measure), ['N', 'who', 'ms', 'overlapped'])],
        floatfmt='.1f')
