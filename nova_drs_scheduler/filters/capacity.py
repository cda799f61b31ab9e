"""The classic over-commit check shared by Core, Ram and DiskFilter.

Nova removed these filters (Train, Victoria) because placement enforces
``(total - reserved) * allocation_ratio``.  They still earn their keep as a
way to *tighten* that limit per aggregate, and for operators whose tooling
reads ``host_state.limits``; they can never loosen placement's own limit.
"""

from nova.scheduler import filters
from oslo_log import log as logging

from nova_drs_scheduler import log_once
from nova_drs_scheduler.filters import aggregate

LOG = logging.getLogger(__name__)


class CapacityFilter(filters.BaseHostFilter):
    """Reject hosts without room for the request at their allocation ratio.

    Subclasses name the resource; the algorithm is the pre-Train one:
    pass when capacity is unknown, refuse a request larger than the
    physical capacity (an instance may over-commit against others, never
    against itself), then compare against ``total * ratio - used`` and
    record the limit in ``host_state.limits``.  Where the classic filter
    recorded the limit before deciding (CoreFilter), a rejected host
    carries it too; RamFilter and DiskFilter recorded it on pass only.
    """

    RUN_ON_REBUILD = False

    #: Key written to host_state.limits.
    LIMIT_KEY = None
    #: Name of the allocation ratio attribute of HostState.
    RATIO_ATTR = None
    #: Unit of total/used/requested, for log messages.
    UNIT = None
    #: Record the limit before deciding, as the classic CoreFilter did,
    #: instead of only when the host passes (classic Ram/DiskFilter).
    LIMIT_BEFORE_DECIDING = False

    def _total(self, host_state):
        raise NotImplementedError()

    def _used(self, host_state):
        raise NotImplementedError()

    def _requested(self, spec_obj):
        raise NotImplementedError()

    def _limit_value(self, limit):
        """Value stored in host_state.limits for a limit in UNIT."""
        return limit

    def _ratio(self, host_state, spec_obj):
        return getattr(host_state, self.RATIO_ATTR)

    def host_passes(self, host_state, spec_obj):
        total = self._total(host_state)
        if not total:
            log_once.warning(
                LOG, (host_state.host, self.__class__.__name__, 'unknown'),
                '%s: capacity of host %s is unknown; passing it (fail '
                'safe).', self.__class__.__name__, host_state.host)
            return True
        ratio = self._ratio(host_state, spec_obj)
        limit = total * ratio
        if self.LIMIT_BEFORE_DECIDING:
            host_state.limits[self.LIMIT_KEY] = self._limit_value(limit)
        requested = self._requested(spec_obj)
        if requested > total:
            LOG.debug('%(host)s fails %(filter)s: the request (%(req)s '
                      '%(unit)s) exceeds its physical capacity (%(total)s '
                      '%(unit)s).',
                      {'host': host_state, 'filter': self.__class__.__name__,
                       'req': requested, 'total': total, 'unit': self.UNIT})
            return False
        free = limit - self._used(host_state)
        if free < requested:
            LOG.debug('%(host)s fails %(filter)s: %(free)s %(unit)s free at '
                      'allocation ratio %(ratio)s, %(req)s requested.',
                      {'host': host_state, 'filter': self.__class__.__name__,
                       'free': free, 'ratio': ratio, 'req': requested,
                       'unit': self.UNIT})
            return False
        host_state.limits[self.LIMIT_KEY] = self._limit_value(limit)
        return True


class AggregateRatioMixin:
    """Take the ratio from aggregate metadata: the minimum wins.

    Falls back to the host's own ratio when no aggregate sets a valid one.
    """

    #: Aggregate metadata key holding the ratio.
    AGGREGATE_KEY = None

    def _ratio(self, host_state, spec_obj):
        return aggregate.min_positive_float(
            host_state, self.AGGREGATE_KEY,
            getattr(host_state, self.RATIO_ATTR))
