"""Resolve the scheduler manager and host manager by name, like old Nova.

Both names resolve through stevedore, so a third-party package registers
its own manager (``nova.scheduler.driver``) or host manager
(``nova.scheduler.host_manager``) and operators pick it in nova.conf.
"""

from nova.conf import scheduler as nova_scheduler_conf
from oslo_config import cfg
from oslo_log import log as logging
from stevedore import driver as stevedore_driver
from stevedore import exception as stevedore_exc
from stevedore import extension

from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler.conf import scheduler as scheduler_conf

LOG = logging.getLogger(__name__)

#: Old [scheduler] driver values that no longer exist, and what replaces
#: them: (driver, host_manager or None).
RETIRED_DRIVERS = {
    'caching_scheduler': ('filter_scheduler', 'caching_host_manager'),
    'nova.scheduler.filter_scheduler.FilterScheduler':
        ('filter_scheduler', None),
    'nova.scheduler.caching_scheduler.CachingScheduler':
        ('filter_scheduler', 'caching_host_manager'),
}


#: Old class-path values of [DEFAULT] scheduler_host_manager (Nova before
#: Newton loaded the class itself) and the stevedore name that replaces them.
RETIRED_HOST_MANAGERS = {
    'nova.scheduler.host_manager.HostManager': 'host_manager',
}


def _load(namespace: str, name: str, option: str):
    try:
        return stevedore_driver.DriverManager(
            namespace, name, invoke_on_load=False).driver
    except stevedore_exc.NoMatches:
        available = sorted(extension.ExtensionManager(namespace).names())
        raise drs_conf.ConfigError(
            f'Invalid value for option {option}: {name!r} is not a '
            f'registered name in the {namespace} namespace. Available: '
            f'{", ".join(available) or "none"}.') from None


def manager_class(conf: cfg.ConfigOpts = drs_conf.CONF):
    """The scheduler manager class named by ``[scheduler] driver``."""
    return _load(scheduler_conf.DRIVER_NAMESPACE, conf.scheduler.driver,
                 '[scheduler] driver')


def host_manager_class(conf: cfg.ConfigOpts = drs_conf.CONF):
    """The host manager class named by ``[scheduler] host_manager``.

    None when the option is unset: the manager keeps its own default.
    """
    name = conf.scheduler.host_manager
    if name is None:
        return None
    return _load(scheduler_conf.HOST_MANAGER_NAMESPACE, name,
                 '[scheduler] host_manager')


def class_path(cls) -> str:
    return f'{cls.__module__}.{cls.__qualname__}'


def _defaults() -> dict:
    """``{(group, name): default}`` of every option translation touches."""
    known = [('filter_scheduler', opt)
             for opt in nova_scheduler_conf.filter_scheduler_opts]
    known += [(group.name, opt)
              for group, opts in scheduler_conf.list_opts().items()
              for opt in opts]
    return {(group, opt.name): opt.default for group, opt in known}


#: Where a value somebody wrote comes from.
_WRITTEN = (cfg.Locations.user, cfg.Locations.command_line,
            cfg.Locations.environment)


def _is_set(conf, group, name) -> bool:
    """True when nova.conf, the command line or an override sets the option.

    oslo.config knows where a value came from, so an option written with
    its default value counts as set.  An override is the exception: its
    location outlives ``clear_override``, so an override counts only while
    it changes the value.
    """
    # None for an option without default that nothing set.
    info = conf.get_location(name, None if group == 'DEFAULT' else group)
    location = info.location if info else None
    if location in _WRITTEN:
        return True
    if location != cfg.Locations.set_override:
        return False
    section = conf if group == 'DEFAULT' else conf[group]
    value = getattr(section, name)
    return value not in (None, []) and value != _defaults()[(group, name)]


def translate_legacy(conf: cfg.ConfigOpts = drs_conf.CONF) -> list:
    """Apply legacy ``[DEFAULT]`` names where the new name is not set.

    Returns the translations made, each logged as a deprecation warning.
    A new name set explicitly always wins over its legacy alias.
    """
    done = []
    for old, (group, new) in scheduler_conf.LEGACY.items():
        if not _is_set(conf, 'DEFAULT', old):
            continue
        if _is_set(conf, group, new):
            LOG.warning('Ignoring deprecated [DEFAULT] %s: [%s] %s is set '
                        'and wins.', old, group, new)
            continue
        value = getattr(conf, old)
        if (group, new) == ('scheduler', 'host_manager'):
            value = RETIRED_HOST_MANAGERS.get(value, value)
        if (group, new) == ('scheduler', 'driver') and \
                value in RETIRED_DRIVERS:
            value, host_manager = RETIRED_DRIVERS[value]
            if host_manager and not _is_set(conf, 'scheduler',
                                            'host_manager'):
                conf.set_override('host_manager', host_manager, 'scheduler')
                done.append((old, 'scheduler', 'host_manager',
                             host_manager))
        conf.set_override(new, value, group)
        done.append((old, group, new, value))
    for old, group, new, value in done:
        LOG.warning('[DEFAULT] %s is deprecated; using it as [%s] %s = %s. '
                    'Rename it in nova.conf.', old, group, new, value)
    return done
