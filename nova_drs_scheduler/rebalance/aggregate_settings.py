"""Per-host DRS settings from aggregate metadata, read without trusting it.

Keys, on any aggregate of the host:

- ``drs_cpu_threshold`` / ``drs_ram_threshold``: percent, 0-100; with
  several aggregates the strictest (lowest) wins;
- ``drs_mode``: ``global`` or ``aggregate``; ``aggregate`` wins;
- ``drs_exclude=true`` or ``drs_enabled=false``: the host is neither
  judged nor a destination;
- ``drs_automation``: ``off``, ``manual`` or ``automatic``, overriding
  ``[drs] automation`` for the host; with several aggregates the most
  cautious (``off``, then ``manual``) wins;
- ``drs_power_management``: ``off``, ``manual`` or ``automatic``,
  overriding ``[drs] power_management`` for the host, the most cautious
  winning likewise.

An invalid value is logged once and ignored for that host; it never
raises, so one typo cannot stop the rebalancer for the whole cloud.
"""

import dataclasses
import math

from oslo_log import log as logging
from oslo_utils import strutils

from nova_drs_scheduler import log_once
from nova_drs_scheduler.planning import model

LOG = logging.getLogger(__name__)

MODES = ('global', 'aggregate')


@dataclasses.dataclass(frozen=True)
class HostSettings:
    mode: str
    #: Pool key: the sorted names of the host's aggregates; None if none.
    pool: str | None
    cpu_threshold: float
    ram_threshold: float
    excluded: bool
    #: ``drs_automation`` of the host's aggregates; None: ``[drs]``'s.
    automation: str | None = None
    #: The effective level (this or ``[drs]``'s) is ``off``.
    automation_off: bool = False
    #: Effective power management level: the aggregates'
    #: ``drs_power_management``, else ``[drs] power_management``.
    power_level: str = 'off'


def host_settings(host: str, aggregates, config: model.PlannerConfig,
                  power_management: str = 'off') -> HostSettings:
    """Settings of ``host`` given the aggregates it belongs to;
    ``power_management`` is ``[drs]``'s level."""
    metadata = [(agg.name, agg.metadata or {}) for agg in aggregates]
    modes = set(_values(host, metadata, 'drs_mode', _choice(MODES)))
    excluded = (True in _values(host, metadata, 'drs_exclude', _bool) or
                False in _values(host, metadata, 'drs_enabled', _bool))
    names = sorted(name for name, _md in metadata)
    levels = _values(host, metadata, 'drs_automation', _choice(model.LEVELS))
    power = _values(host, metadata, 'drs_power_management',
                    _choice(model.LEVELS))
    return HostSettings(
        mode='aggregate' if 'aggregate' in modes else (
            modes.pop() if modes else config.mode),
        pool=','.join(names) if names else None,
        cpu_threshold=min(_values(host, metadata, 'drs_cpu_threshold',
                                  _percent), default=config.cpu_threshold),
        ram_threshold=min(_values(host, metadata, 'drs_ram_threshold',
                                  _percent), default=config.ram_threshold),
        excluded=excluded,
        automation=min(levels, key=model.LEVELS.index, default=None),
        power_level=min(power, key=model.LEVELS.index,
                        default=power_management))


def any_enabled(aggregates) -> bool:
    """Whether an aggregate turns rebalancing or power management on
    (``drs_automation`` or ``drs_power_management`` ``manual`` or
    ``automatic``) although ``[drs]`` leaves them off."""
    return any(str((agg.metadata or {}).get(key, '')).strip().lower()
               in model.LEVELS[1:] for agg in aggregates
               for key in ('drs_automation', 'drs_power_management'))


def _values(host, metadata, key, parse):
    values = []
    for name, md in metadata:
        if key not in md:
            continue
        try:
            values.append(parse(md[key]))
        except ValueError:
            log_once.warning(
                LOG, (host, name, key, md[key]),
                'Host %s: ignoring invalid DRS metadata %s=%r of aggregate '
                '%s.', host, key, md[key], name)
    return values


def _percent(raw) -> float:
    value = float(raw)
    if not math.isfinite(value) or not 0 <= value <= 100:
        raise ValueError(raw)
    return value


def _choice(choices):
    """A parser accepting one of ``choices``, case-insensitively."""
    def parse(raw) -> str:
        value = str(raw).strip().lower()
        if value not in choices:
            raise ValueError(raw)
        return value
    return parse


def _bool(raw) -> bool:
    return strutils.bool_from_string(raw, strict=True)
