"""What differs between the Nova releases we support (31 to 34).

Everything release-specific lives here, one function per difference, each
choosing by what the installed Nova has rather than by its version number.
doc/upgrade.md lists the releases and what was tested on each.
"""

from nova import utils
from nova.scheduler import request_filter

try:
    # Nova 34 (2026.2) gathers its executors in thread_pool_factory.
    from nova import thread_pool_factory
except ImportError:  # Nova 31-33: the executors live in nova.utils.
    thread_pool_factory = None


def reset_executors_before_fork() -> None:
    """Drop the parent's thread-pool executors before workers fork.

    Forked workers must build their own executors, as in nova-scheduler.
    Nova 34 resets them all with ``thread_pool_factory``; Nova 31-33 have
    two executors in ``nova.utils``, each destroyed on its own.
    """
    if thread_pool_factory is not None:
        thread_pool_factory.reset_all_executors()
    else:
        utils.destroy_scatter_gather_executor()
        utils.destroy_default_executor()


def owner_trait_min_compute_version() -> int | None:
    """Service version from which Nova requires the ``OWNER_NOVA`` trait.

    Nova 34 added the ``owner_nova_filter`` request filter, which requires
    the trait once every nova-compute reports this version or newer; Nova
    31-33 have no such filter (None): their computes do not report the
    trait, so it must never be required there.
    """
    return getattr(request_filter, 'MIN_COMPUTE_VERSION_OWNER_TRAIT', None)
