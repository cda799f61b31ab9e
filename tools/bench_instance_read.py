#!/usr/bin/env python3
"""Benchmark: the SQL of one period's instance read, Nova's against ours.

Builds, per N, the period benchmark's cell (the benchmarks' builder,
tools/benchlib/cloud.py: N hosts, ~20 instances each) and takes the hosts
a period would find over (``--over``), 10 per query as
``live.READ_SLICE``.  For Nova's
``InstanceList.get_by_filters`` (what ``live.read_instances`` used) and
``live._instance_rows``, it captures the SQL each slice runs, prints
SQLite's plan of it, and times the statements re-run on the raw
connection (CPU, best of ``--repeats``): the database's share of the read,
without the ORM or Nova's objects.  Usage::

    tools/bench_instance_read.py --nodes 1000 5000
"""

import sys

from benchlib import patching  # noqa: I001

# Nova must be monkey patched before anything imports eventlet or futurist.
patching.monkey_patch(sys.argv[1:])

import argparse  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402

import sqlalchemy as sa  # noqa: E402
from benchlib.cloud import create_cell  # noqa: E402
from benchlib.cloud import drop_cell  # noqa: E402
from benchlib.cloud import environment  # noqa: E402
from benchlib.cloud import populate  # noqa: E402
from benchlib.tables import print_tables  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova import objects  # noqa: E402

from nova_drs_scheduler.rebalance import live  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, nargs='+', default=[1000, 5000])
    parser.add_argument('--over', type=float, default=0.05,
                        help='share of hosts over the CPU threshold')
    parser.add_argument('--repeats', type=int, default=3)
    return parser.parse_args()


def nova_read(cctxt, names):
    return objects.InstanceList.get_by_filters(
        cctxt, {'host': names, 'deleted': False}, expected_attrs=[])


def our_read(cctxt, names):
    return live._instance_rows(cctxt, 'host', names)


def statement_of(read, cctxt, names):
    """The instances query ``read`` runs for ``names``: (SQL, params)."""
    seen = []

    def capture(conn, cursor, statement, parameters, context, many):
        if 'FROM instances' in statement:
            seen.append((statement, parameters))
    sa.event.listen(sa.engine.Engine, 'before_cursor_execute', capture)
    try:
        read(cctxt, names)
    finally:
        sa.event.remove(sa.engine.Engine, 'before_cursor_execute', capture)
    return seen[0]


def run_size(args, workdir, size):
    ctxt = nova_context.get_admin_context()
    cell = create_cell(ctxt, None, workdir, size)
    with nova_context.target_cell(ctxt, cell) as cctxt:
        nodes, _pushed = populate(cctxt, cell, cell.database_connection,
                                  size, 20)
    hot = sorted(random.Random(size).sample(sorted(nodes),
                                            int(size * args.over)))
    slices = [hot[start:start + live.READ_SLICE]
              for start in range(0, len(hot), live.READ_SLICE)]
    connection = sa.create_engine(cell.database_connection).raw_connection()
    rows = []
    with nova_context.target_cell(ctxt, cell) as cctxt:
        for label, read in (('InstanceList.get_by_filters', nova_read),
                            ('live._instance_rows', our_read)):
            statements = [statement_of(read, cctxt, names)
                          for names in slices]
            cursor = connection.cursor()
            plan = [step[3] for step in cursor.execute(
                'EXPLAIN QUERY PLAN ' + statements[0][0], statements[0][1])]
            spent = []
            for _ in range(args.repeats):
                cpu = time.process_time()
                for sql, params in statements:
                    cursor.execute(sql, params).fetchall()
                spent.append(time.process_time() - cpu)
            rows.append([size, len(hot), len(slices), label,
                         min(spent) * 1000, min(spent) * 1000 / len(slices),
                         plan[0]])
    connection.close()
    drop_cell(cell)
    return rows


def main():
    args = parse_args()
    rows = []
    with environment(None) as workdir:
        for size in args.nodes:
            rows += run_size(args, workdir, size)
    print_tables([(
        f'SQLite, CPU of the statements alone, best of {args.repeats}:',
        rows, ['N', 'hosts over', 'queries', 'read', 'ms in all',
               'ms per query', 'plan (first step)'])], floatfmt='.1f')
    return 0


if __name__ == '__main__':
    sys.exit(main())
