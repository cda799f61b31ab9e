"""DRSPoolFilter: keep a flavor's servers inside matching DRS pools."""

from nova.scheduler import filters
from nova.scheduler.filters import extra_specs_ops
from nova.scheduler.filters import utils as filter_utils
from oslo_log import log as logging

from nova_drs_scheduler import log_once

LOG = logging.getLogger(__name__)

#: Flavor extra-spec scope matched against aggregate metadata.
SCOPE = 'drs_pool'


def pool_requirements(extra_specs) -> dict:
    """``{metadata_key: requirement}`` from the flavor's ``drs_pool:`` keys."""
    prefix = SCOPE + ':'
    return {key[len(prefix):]: value
            for key, value in (extra_specs or {}).items()
            if key.startswith(prefix)}


def _matches(host: str, key: str, value: str, requirement: str) -> bool:
    """Nova's matcher, but a value it cannot compare is no match.

    ``extra_specs_ops.match`` raises ValueError for a numeric operator on
    a non-numeric metadata value and IndexError for a bare ``<or>``.
    """
    try:
        return extra_specs_ops.match(value, requirement)
    except (ValueError, IndexError):
        log_once.warning(
            LOG, (host, 'DRSPoolFilter', key, value, requirement),
            'DRSPoolFilter: host %s: aggregate metadata %s=%r cannot be '
            'matched against %r; treated as no match.', host, key, value,
            requirement)
        return False


class DRSPoolFilter(filters.BaseHostFilter):
    """Flavor ``drs_pool:KEY=REQ`` must match aggregate metadata ``KEY``.

    REQ uses Nova's extra-spec operators (``<in>``, ``s==``, ``>=``,
    ``<or>`` ...), as AggregateInstanceExtraSpecsFilter does, but in a scope
    of its own so DRS pools do not collide with other aggregate matching.
    Comma-separated metadata values each count as a candidate match.
    """

    run_filter_once_per_request = True
    RUN_ON_REBUILD = False

    def host_passes(self, host_state, spec_obj):
        flavor = spec_obj.flavor
        if 'extra_specs' not in flavor:
            return True
        wanted = pool_requirements(flavor.extra_specs)
        if not wanted:
            return True
        metadata = filter_utils.aggregate_metadata_get_by_host(host_state)
        for key, requirement in wanted.items():
            values = metadata.get(key)
            if not values:
                LOG.debug('%(host)s fails DRSPoolFilter: no aggregate of the '
                          'host sets %(key)s.', {'host': host_state,
                                                 'key': key})
                return False
            if not any(_matches(host_state.host, key, value, requirement)
                       for value in values):
                LOG.debug('%(host)s fails DRSPoolFilter: %(key)s=%(vals)s '
                          'does not match %(req)r.',
                          {'host': host_state, 'key': key,
                           'vals': sorted(values), 'req': requirement})
                return False
        return True
