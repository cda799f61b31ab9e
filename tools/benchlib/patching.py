"""Eventlet or native threads for a benchmark, chosen before Nova is imported.

Nova must be monkey patched before anything imports eventlet or futurist,
so a benchmark script calls :func:`monkey_patch` before importing Nova or
the other modules of this package.
"""

import argparse
import os

from nova_drs_scheduler import compat

#: ``--concurrency``: native threads (Nova 34's default) or eventlet.
CONCURRENCY = ('threading', 'eventlet')


def monkey_patch(argv: list[str]) -> str:
    """Patch as ``--concurrency`` in ``argv`` says; returns the mode.

    The mode is also set in the environment: Nova's test fixtures, which
    the benchmarks import, patch again.
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument('--concurrency', choices=CONCURRENCY,
                        default='threading')
    backend = parser.parse_known_args(argv)[0].concurrency
    os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = str(
        backend == 'threading')
    compat.monkey_patch(backend)
    return backend
