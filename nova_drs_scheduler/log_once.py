"""Log a recurring problem once per cause, not once per request.

A bad aggregate key or a broken metric is seen on every scheduling
request; logging it each time would drown the scheduler's log.
"""

import collections
import threading

_MAX_KEYS = 10000
_seen = collections.OrderedDict()
_lock = threading.Lock()


def warning(logger, key: tuple, msg: str, *args) -> bool:
    """Log ``msg`` at WARNING the first time ``key`` is seen."""
    if not _first(key):
        return False
    logger.warning(msg, *args)
    return True


def info(logger, key: tuple, msg: str, *args) -> bool:
    """Log ``msg`` at INFO the first time ``key`` is seen: an expected
    gap worth one line, not an alarm."""
    if not _first(key):
        return False
    logger.info(msg, *args)
    return True


def _first(key: tuple) -> bool:
    with _lock:
        if key in _seen:
            _seen.move_to_end(key)
            return False
        _seen[key] = True
        if len(_seen) > _MAX_KEYS:
            _seen.popitem(last=False)
    return True


def reset() -> None:
    """Forget what was logged (tests, and a SIGHUP reset)."""
    with _lock:
        _seen.clear()
