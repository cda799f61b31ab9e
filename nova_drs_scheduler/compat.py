"""What differs between the Nova releases we support (31 to 34).

Everything release-specific lives here, one function per difference, each
choosing by what the installed Nova has rather than by its version number.
doc/upgrade.md lists the releases and what was tested on each.

Nova is imported inside the functions: :func:`monkey_patch` must run
before any other Nova module is imported, so importing this module must
import none.
"""

import inspect


def monkey_patch(backend: str = 'eventlet') -> None:
    """Choose eventlet or native threads, as Nova's own services do.

    Call it before anything else imports Nova (or eventlet, futurist).
    ``backend`` is the default when the operator forces nothing.

    - Nova 33-34: ``patch(backend=...)``; ``OS_NOVA_DISABLE_EVENTLET_PATCHING``
      (and, on 34, ``[DEFAULT] concurrency_backend``) override the default.
    - Nova 32: ``patch()`` takes no default: eventlet unless
      ``OS_NOVA_DISABLE_EVENTLET_PATCHING`` is set, as its nova-scheduler.
    - Nova 31: importing ``nova.monkey_patch`` patches eventlet (unless that
      variable is set); there is no ``patch()``.
    """
    from nova import monkey_patch as nova_monkey_patch
    patch = getattr(nova_monkey_patch, 'patch', None)
    if patch is None:
        return
    if 'backend' in inspect.signature(patch).parameters:
        patch(backend=backend)
    else:
        patch()


def parse_args(argv: list[str], prog: str) -> None:
    """Nova's ``config.parse_args`` for the program ``prog``.

    oslo.config looks for the program's own config files
    (``/etc/nova/<prog>.conf``, ``<prog>.conf.d``) beside nova.conf. Nova
    33-34 take ``prog``; Nova 31-32 have no such argument (a TypeError), and
    oslo.config takes the name of the running script instead
    (``sys.argv[0]``), which is ``prog`` when run as our console script.
    """
    from nova import config
    if 'prog' in inspect.signature(config.parse_args).parameters:
        config.parse_args(argv, prog=prog)
    else:
        config.parse_args(argv)


def reset_executors_before_fork() -> None:
    """Drop the parent's thread-pool executors before workers fork.

    Forked workers must build their own executors, as in nova-scheduler.
    Nova 34 resets them all with ``nova.thread_pool_factory``; Nova 32-33
    have two executors in ``nova.utils``, each destroyed on its own; Nova
    31 has none (eventlet green pools only): nothing to do.
    """
    try:
        from nova import thread_pool_factory
    except ImportError:
        from nova import utils
        for name in ('destroy_scatter_gather_executor',
                     'destroy_default_executor'):
            destroy = getattr(utils, name, None)
            if destroy is not None:
                destroy()
    else:
        thread_pool_factory.reset_all_executors()


def owner_trait_min_compute_version() -> int | None:
    """Service version from which Nova requires the ``OWNER_NOVA`` trait.

    Nova 34 added the ``owner_nova_filter`` request filter, which requires
    the trait once every nova-compute reports this version or newer; Nova
    31-33 have no such filter (None): their computes do not report the
    trait, so it must never be required there.
    """
    from nova.scheduler import request_filter
    return getattr(request_filter, 'MIN_COMPUTE_VERSION_OWNER_TRAIT', None)
