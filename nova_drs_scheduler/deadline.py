"""Run calls side by side under one deadline, in either concurrency mode.

Nova 34 services run on native threads, Nova's test harness (and older
releases) on eventlet; like Nova's own scatter-gather
(``nova.context.scatter_gather_cells``) this uses a futurist executor of
the matching kind and ``futurist.waiters.wait_for_all``.  A call still
running at the deadline is left to finish in the background (a blocking
RPC ends at ``rpc_response_timeout``); its result is dropped, and one not
started yet is cancelled.
"""

from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Mapping

import futurist
from futurist import waiters

from nova_drs_scheduler import concurrency


def gather(calls: Mapping[Hashable, Callable[[], object]],
           timeout: float | None, max_workers: int = 8
           ) -> tuple[dict, set]:
    """``({key: result}, {keys late})`` of ``calls`` run concurrently.

    A call that raised within the deadline raises here (the first one in
    ``calls`` order).  ``timeout`` None waits for all.
    """
    if not calls:
        return {}, set()
    kind = (futurist.GreenThreadPoolExecutor
            if concurrency.backend() == 'eventlet'
            else futurist.ThreadPoolExecutor)
    # One executor per call of gather, never shut down: shutting down may
    # wait for a hung call (Nova's test harness makes every green
    # executor's shutdown wait), which is what the deadline forbids.  Its
    # workers end with their calls once it is dropped.
    executor = kind(max_workers=min(max_workers, len(calls)))
    futures = {key: executor.submit(call) for key, call in calls.items()}
    waiters.wait_for_all(futures.values(), timeout)
    done, late = {}, set()
    for key, future in futures.items():
        if not future.done():
            future.cancel()
            late.add(key)
        else:
            done[key] = future.result()
    return done, late
