"""A metric source read from a JSON file, for tests, demos and simulation.

``[drs] static_metrics_file`` names the file; it is re-read on every call,
so a test or a demo can change the load by rewriting it::

    {
      "timestamp": 1767225600,
      "hosts": {
        "compute1": {"cpu_percent": 100, "ram_percent": 62.0,
                     "cpu_waiting": 2.5},
        "compute2": {"cpu_percent": 20.0, "timestamp": 1767225540}
      },
      "instances": {"3f0c...": 1.5, "9a1b...": 0.25},
      "instance_waits": {"3f0c...": 0.5}
    }

A host's ``timestamp`` defaults to the top-level one, which defaults to the
time of reading (the sample is then always fresh).  ``ram_percent`` is
optional, and so is ``cpu_waiting``, the host's CPU contention in cores
waiting (without it, or when it is not a number, the host is seen by its
CPU alone).  Instance values, loads and waits, are cores.  Malformed
entries are left out of the answer, as the interface requires; a missing
or unparsable file is an error naming the option, since nothing can be
measured at all.
"""

import json
import math
import time

from nova_drs_scheduler.planning.metrics import HostSample
from nova_drs_scheduler.rebalance.sources import base


class StaticSource(base.MetricsSource):

    def _read(self) -> dict:
        path = self.conf.drs.static_metrics_file
        try:
            with open(path, encoding='utf-8') as handle:
                data = json.load(handle)
        except (OSError, TypeError, ValueError) as exc:
            raise ValueError(f'[drs] static_metrics_file {path!r} is not a '
                             f'readable JSON file: {exc}')
        if not isinstance(data, dict):
            raise ValueError(f'[drs] static_metrics_file {path!r}: the top '
                             f'level must be an object')
        return data

    def host_samples(self, context, hosts):
        data = self._read()
        default_ts = data.get('timestamp', time.time())
        table = data.get('hosts') or {}
        samples = {}
        for host in hosts:
            try:
                entry = table.get(host)
                ram = entry.get('ram_percent')
                samples[host] = HostSample(
                    _number(entry.get('timestamp', default_ts)),
                    _number(entry['cpu_percent'], 100),
                    None if ram is None else _number(ram, 100),
                    _optional(entry.get('cpu_waiting')))
            except (AttributeError, KeyError, TypeError, ValueError):
                continue
        return samples

    def instance_loads(self, context, instances):
        return _cores(self._read().get('instances'), instances)

    def instance_waits(self, context, instances):
        return _cores(self._read().get('instance_waits'), instances)


def _cores(table, instances) -> dict:
    """{uuid: cores} of ``instances`` found in ``table`` with a valid
    value."""
    table = table or {}
    values = {}
    for instance in instances:
        try:
            values[instance.uuid] = _number(table[instance.uuid])
        except (KeyError, TypeError, ValueError):
            continue
    return values


def _optional(raw) -> float | None:
    """A valid number, or None: what a host lacks or gives wrong beside
    its CPU leaves only that unmeasured."""
    try:
        return None if raw is None else _number(raw)
    except (TypeError, ValueError):
        return None


def _number(raw, maximum=math.inf) -> float:
    """A finite number in ``0..maximum``; else ValueError (entry left out)."""
    value = float(raw)
    if not math.isfinite(value) or not 0 <= value <= maximum:
        raise ValueError(raw)
    return value
