"""Options of nova-drs-scheduler, registered on Nova's global CONF.

Each submodule owns the options of one feature and exposes ``list_opts()``
returning ``{group: [opts]}``; this package merges them for registration,
validation and ``oslo-config-generator``.
"""

from oslo_config import cfg

from nova_drs_scheduler.conf import utilization

CONF = cfg.CONF

_MODULES = (utilization,)


class ConfigError(ValueError):
    """A config value is unusable; the message names the option."""


def _merged():
    merged = {}
    for module in _MODULES:
        for group, opts in module.list_opts().items():
            merged.setdefault(group, []).extend(opts)
    return merged


def register_opts(conf: cfg.ConfigOpts) -> None:
    for group, opts in _merged().items():
        conf.register_group(group)
        conf.register_opts(opts, group=group)


def list_opts():
    """Entry point of ``oslo.config.opts`` for the sample config."""
    return [(group, list(opts)) for group, opts in _merged().items()]


def validate(conf: cfg.ConfigOpts = CONF) -> None:
    """Read every option once so a bad value fails now, not mid-request.

    oslo.config only checks types and bounds when a value is read; the
    service calls this at start so that a typo stops it with the option's
    name instead of breaking the first scheduling request.
    """
    for group, opts in _merged().items():
        for opt in opts:
            try:
                getattr(conf[group.name], opt.dest)
            except (cfg.ConfigFileValueError, ValueError) as exc:
                raise ConfigError(
                    f'Invalid value for option [{group.name}] {opt.name}: '
                    f'{exc}') from exc
    for module in _MODULES:
        check = getattr(module, 'check', None)
        if check is not None:
            problem = check(conf)
            if problem:
                raise ConfigError(problem)


register_opts(CONF)
