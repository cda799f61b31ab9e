"""Which concurrency mode this process runs in: eventlet or native threads.

A leaf module (it imports nothing of ours): ``deadline`` picks its
executor by the answer and the service logs it, without either importing
the other.
"""

import sys


def backend() -> str:
    """``eventlet`` if this process is monkey patched, else ``threading``.

    Asked of eventlet itself, the same way on every Nova release.
    """
    patcher = sys.modules.get('eventlet.patcher')
    if patcher is not None and patcher.is_monkey_patched('thread'):
        return 'eventlet'
    return 'threading'
