"""Options of nova-drs-scheduler, registered on Nova's global CONF.

Each submodule owns the options of one feature and exposes ``list_opts()``
returning ``{group: [opts]}``; this package merges them for registration,
validation and ``oslo-config-generator``.
"""

import math

from oslo_config import cfg

from nova_drs_scheduler.conf import coordination
from nova_drs_scheduler.conf import database
from nova_drs_scheduler.conf import executor
from nova_drs_scheduler.conf import exporter
from nova_drs_scheduler.conf import host_cache
from nova_drs_scheduler.conf import power
from nova_drs_scheduler.conf import power_driver
from nova_drs_scheduler.conf import prometheus
from nova_drs_scheduler.conf import rebalance
from nova_drs_scheduler.conf import scheduler
from nova_drs_scheduler.conf import utilization

CONF = cfg.CONF

_MODULES = (utilization, executor, host_cache, scheduler, rebalance,
            prometheus, coordination, database, exporter, power,
            power_driver)


class ConfigError(ValueError):
    """A config value is unusable; the message names the option."""


def _merged():
    """``{group name: (OptGroup, [opts])}`` over every module."""
    merged = {}
    for module in _MODULES:
        for group, opts in module.list_opts().items():
            merged.setdefault(group.name, (group, []))[1].extend(opts)
    return merged


def register_opts(conf: cfg.ConfigOpts) -> None:
    for name, (group, opts) in _merged().items():
        if name == 'DEFAULT':
            conf.register_opts(opts)
        else:
            # A new OptGroup per ConfigOpts: oslo.config copies a group
            # shallowly, so two ConfigOpts registering the same one share
            # their option values and overrides.
            conf.register_group(cfg.OptGroup(name, title=group.title,
                                             help=group.help))
            conf.register_opts(opts, group=name)


def list_opts():
    """Entry point of ``oslo.config.opts`` for the sample config."""
    return [(None if name == 'DEFAULT' else group, list(opts))
            for name, (group, opts) in _merged().items()]


def validate(conf: cfg.ConfigOpts = CONF) -> None:
    """Read every option once so a bad value fails now, not mid-request.

    oslo.config only checks types and bounds when a value is read; the
    service calls this at start so that a typo stops it with the option's
    name instead of breaking the first scheduling request.
    """
    for name, (_group, opts) in _merged().items():
        section = conf if name == 'DEFAULT' else conf[name]
        for opt in opts:
            try:
                value = getattr(section, opt.dest)
            except (cfg.Error, ValueError) as exc:
                # cfg.Error: also a ``$name`` substitution naming nothing.
                raise ConfigError(
                    f'Invalid value for option [{name}] {opt.name}: '
                    f'{exc}') from exc
            # ``nan`` passes oslo.config's bounds (every comparison is
            # false) and would silently disable what the option controls;
            # an empty number (``opt =``) reads as None.
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(
                    f'Invalid value for option [{name}] {opt.name}: '
                    f'{value} is not a finite number')
            if value is None and opt.default is not None:
                raise ConfigError(
                    f'Invalid value for option [{name}] {opt.name}: '
                    f'empty; remove the line to use the default')
    for module in _MODULES:
        check = getattr(module, 'check', None)
        if check is not None:
            problem = check(conf)
            if problem:
                raise ConfigError(problem)


register_opts(CONF)
