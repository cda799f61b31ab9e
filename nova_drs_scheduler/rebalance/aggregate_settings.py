"""Per-host DRS settings from aggregate metadata, read without trusting it.

Keys, on any aggregate of the host:

- ``drs_cpu_threshold`` / ``drs_ram_threshold``: percent, 0-100; with
  several aggregates the strictest (lowest) wins;
- ``drs_mode``: ``global`` or ``aggregate``; ``aggregate`` wins;
- ``drs_exclude=true`` or ``drs_enabled=false``: the host is neither
  judged nor a destination.

An invalid value is logged once and ignored for that host; it never
raises, so one typo cannot stop the rebalancer for the whole cloud.
"""

import dataclasses
import math

from oslo_log import log as logging
from oslo_utils import strutils

from nova_drs_scheduler import log_once
from nova_drs_scheduler.rebalance import model

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


def host_settings(host: str, aggregates,
                  config: model.PlannerConfig) -> HostSettings:
    """Settings of ``host`` given the aggregates it belongs to."""
    metadata = [(agg.name, agg.metadata or {}) for agg in aggregates]
    modes = {value for value in _values(host, metadata, 'drs_mode', _mode)}
    excluded = (True in _values(host, metadata, 'drs_exclude', _bool) or
                False in _values(host, metadata, 'drs_enabled', _bool))
    names = sorted(name for name, _md in metadata)
    return HostSettings(
        mode='aggregate' if 'aggregate' in modes else (
            modes.pop() if modes else config.mode),
        pool=','.join(names) if names else None,
        cpu_threshold=min(_values(host, metadata, 'drs_cpu_threshold',
                                  _percent), default=config.cpu_threshold),
        ram_threshold=min(_values(host, metadata, 'drs_ram_threshold',
                                  _percent), default=config.ram_threshold),
        excluded=excluded)


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


def _mode(raw) -> str:
    value = str(raw).strip().lower()
    if value not in MODES:
        raise ValueError(raw)
    return value


def _bool(raw) -> bool:
    return strutils.bool_from_string(raw, strict=True)
