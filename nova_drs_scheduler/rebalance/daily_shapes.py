"""The pools' daily shapes between the leader's memory and the DRS
database, so that a new leader starts with the days its predecessors
learnt (``planning/daily_shape.py``).

Read once when a scheduler starts leading; a bin is written when it has
learnt one more day, so a pool costs one short write per bin (every
quarter of an hour).  A stored bin that cannot be used is logged and left
out: that bin is learnt again.
"""

import dataclasses
from collections.abc import Mapping

from oslo_log import log as logging

from nova_drs_scheduler.planning import daily_shape
from nova_drs_scheduler.planning import outlook

LOG = logging.getLogger(__name__)


def load(store) -> dict:
    """``{pool: Outlook}`` holding each pool's stored shape (and no
    forecast yet)."""
    found = {}
    for pool, rows in store.daily_shapes().items():
        shape, rejected = daily_shape.restore(rows)
        for why in rejected:
            LOG.warning('DRS power: a stored bin of the daily shape of pool '
                        '%s is not used: %s', pool, why)
        found[pool] = outlook.Outlook(shape=shape)
        LOG.info('DRS power: pool %s\'s daily shape read: %d bins of %d, '
                 '%d whole days', pool,
                 sum(b is not None for b in shape.bins), shape.per_day,
                 daily_shape.whole_days(shape))
    return found


def save(store, old: Mapping, new: Mapping) -> None:
    """Store the bins each pool's shape learnt from ``old`` to ``new``
    (``{pool: Outlook}`` both)."""
    for pool, state in new.items():
        before = old.get(pool)
        learnt = daily_shape.changed(
            before.shape if before is not None else daily_shape.DailyShape(
                bin_seconds=state.shape.bin_seconds), state.shape)
        store.save_daily_shape(pool, state.shape.bin_seconds, {
            index: dataclasses.asdict(found)
            for index, found in learnt.items()})
