"""Reading numbers from aggregate metadata without trusting them."""

import math

from nova.scheduler.filters import utils as filter_utils
from oslo_log import log as logging

from nova_drs_scheduler import log_once

LOG = logging.getLogger(__name__)

#: Largest value placement stores in its FLOAT columns (allocation ratios
#: included). Above it a value is no ratio at all, and times a capacity it
#: overflows to an infinite limit.
MAX_FLOAT = 3.40282e38


def min_positive_float(host_state, key: str, default):
    """Smallest valid positive value of ``key`` over the host's aggregates.

    Invalid values (``abc``, empty, zero, negative, NaN, infinite, above
    :data:`MAX_FLOAT`) are ignored and logged once with the host's name;
    with no valid value left the caller's default applies.  Ignoring only
    the bad value keeps a tighter ratio set by another aggregate in force.
    """
    valid = []
    for raw in filter_utils.aggregate_values_from_key(host_state, key):
        try:
            value = float(raw)
        except (TypeError, ValueError):
            value = math.nan
        if 0 < value <= MAX_FLOAT:
            valid.append(value)
        else:
            log_once.warning(
                LOG, (host_state.host, key, raw),
                'Host %s: ignoring invalid aggregate metadata %s=%r; '
                'expected a positive number.', host_state.host, key, raw)
    return min(valid) if valid else default
