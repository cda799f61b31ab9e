"""What each completed move really bought, checked against its plan.

Last in a period led here: the moves due for their check
(``[drs] relief_check_delay`` after they completed) are set against this
period's verdicts and their instances' loads by the pure
:func:`~nova_drs_scheduler.planning.relief.check`, and the result is
stored with the move for ``nova-drs history``.

The instances' loads are the period's own measurement: the leader asks
the metric source for the instances of the moves due by the next period
(:func:`checking`) in the one call that measures the period's instances,
so that a source measuring rates (the ``nova`` source's CPU time) has
two samples of each by its check.  Whether the moved loads stayed is what
leveling learns from (:func:`loads_stayed`, each host's
``HostSnapshot.loads_stayed``).
"""

import datetime
from collections.abc import Mapping

from oslo_db import exception as db_exc
from oslo_log import log as logging

from nova_drs_scheduler import conf
from nova_drs_scheduler.db import relief_rows
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import relief

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def _give_up() -> datetime.timedelta:
    """How long after its completion a move's check waits for a sample of
    its hosts: three delays (or periods)."""
    return datetime.timedelta(seconds=3 * max(
        CONF.drs.relief_check_delay, CONF.drs.rebalance_interval))


def checking(store, started: datetime.datetime) -> frozenset:
    """The instances of the moves whose relief check is due by the next
    period (started ``started``), to measure this period: their loads at
    the check say whether the moved load stayed.  Unreadable (a database
    error, logged): none, and the checks are made without them."""
    try:
        due = store.relief_due(started + datetime.timedelta(
            seconds=CONF.drs.rebalance_interval
            - CONF.drs.relief_check_delay))
    except db_exc.DBError as exc:
        LOG.warning('DRS relief checks: the moves due are unreadable, '
                    'their instances\' loads not measured: %s', exc)
        return frozenset()
    return frozenset(move['instance'] for move in due)


def check_due(store, telemetry, verdicts: list[dict],
              started: datetime.datetime,
              loads: Mapping | None = None) -> None:
    """Store what each move due for its relief check really bought, from
    this period's verdicts (read from ``started`` on) and its instances'
    loads (``loads``, {instance uuid: cores} as measured this period; an
    instance not in it is checked without whether its load stayed).  A
    database error here is logged and leaves the moves due."""
    delay = CONF.drs.relief_check_delay
    give_up = _give_up()
    by_host = {verdict['host']: verdict for verdict in verdicts}
    loads = loads or {}
    try:
        for move in store.relief_due(
                started - datetime.timedelta(seconds=delay)):
            result = relief_result(
                move, by_host, started - move['completed_at'] > give_up,
                loads.get(move['instance']))
            if result is None:
                continue
            store.save_relief(move['record_id'], move['instance'], result)
            _log_relief(move, result)
            if result['status'] == db_store.CHECKED:
                telemetry.relief_checked(result['held'])
    except db_exc.DBError as exc:
        LOG.warning('DRS relief checks left for the next period: %s', exc)


def _host_cpu(verdict: dict | None) -> tuple[float, float] | None:
    """A verdict's CPU percent and threshold; None when the host has no
    sample (or an unreadable one, logged)."""
    if verdict is None or verdict.get('cpu_percent') is None:
        return None
    try:
        return (float(verdict['cpu_percent']),
                float(verdict['cpu_threshold']))
    except (KeyError, TypeError, ValueError) as exc:
        LOG.warning('DRS relief check: host %s has no usable CPU and '
                    'threshold (%r): skipped', verdict.get('host'), exc)
        return None


def relief_result(move: dict, verdicts: dict, overdue: bool,
                  instance_cores: float | None = None) -> dict | None:
    """The relief check of one due move (``Store.relief_due``) against
    ``verdicts`` ({host: this period's verdict}) and its instance's load
    now (``instance_cores``, None when not measured): ``relief.check``'s
    result with the hosts' thresholds and the move's source, or why it
    could not be made.  None to try again next period: a host has no
    sample now, and ``overdue`` is False."""
    expected = move['expected']
    if (not isinstance(expected, Mapping)
            or expected.get('source_cpu_before') is None):
        return {'status': db_store.NO_EXPECTATION}
    hosts = (move['source'], move['destination'])
    found = [_host_cpu(verdicts.get(host)) for host in hosts]
    if None in found:
        if not overdue:
            return None
        missing = [h for h, cpu in zip(hosts, found, strict=True)
                   if cpu is None]
        return {'status': db_store.NO_SAMPLE,
                'detail': f'no CPU sample of {" and ".join(missing)} '
                          'since the check was due'}
    (source_cpu, source_thr), (dest_cpu, dest_thr) = found
    try:
        checked = relief.check(expected, source_cpu, dest_cpu, source_thr,
                               dest_thr, instance_cores)
    except (KeyError, TypeError, ValueError) as exc:
        return {'status': db_store.NO_EXPECTATION,
                'detail': f'unreadable expectation: {exc!r}'}
    # The source, for what leveling learns (``Store.relief_checks``).
    return dict(checked, status=db_store.CHECKED, source_threshold=source_thr,
                destination_threshold=dest_thr, source=move['source'])


def loads_stayed(store, now: datetime.datetime) -> dict:
    """``{source host: (stayed, checked)}`` of the relief checks made
    within :data:`~.relief.LEARN_SECONDS` of ``now``
    (:func:`.relief.stayed_counts`).  A database error is logged and
    leaves every host unknown (``{}``): leveling then goes by its other
    signs alone."""
    since = now - datetime.timedelta(seconds=relief.LEARN_SECONDS)
    try:
        # A move is checked at most ``_give_up`` after it completed.
        checks = store.relief_checks(since, since - _give_up())
    except db_exc.DBError as exc:
        LOG.warning('DRS cannot read the relief checks, leveling does not '
                    'learn from them this period: %s', exc)
        return {}
    return relief.stayed_counts(checks, relief_rows.epoch(now))


def _log_relief(move: dict, result: dict) -> None:
    """One line per check; a move with nothing to check at DEBUG (every
    move of the records older than the check)."""
    what = (f'DRS relief of move {move["instance"]} {move["source"]}->'
            f'{move["destination"]} (record {move["record_id"]})')
    if result['status'] == db_store.CHECKED:
        LOG.info('%s: source at %.1f%% (threshold %.1f%%), %.1f points '
                 'bought of %.1f expected; destination at %.1f%% '
                 '(threshold %.1f%%): expectation %s%s', what,
                 result['source_cpu'], result['source_threshold'],
                 result['relief_points'], result['expected_points'],
                 result['destination_cpu'], result['destination_threshold'],
                 'held' if result['held'] else 'not held', _stayed(
                     move, result))
    elif result['status'] == db_store.NO_SAMPLE:
        LOG.info('%s not checked: %s', what, result['detail'])
    else:
        LOG.debug('%s not checked: %s', what, result.get(
            'detail', 'the plan recorded no load before it'))


def _stayed(move: dict, result: dict) -> str:
    """Whether the moved load stayed, for the log line ('' unknown)."""
    if 'load_stayed' not in result:
        return ''
    return (f'; instance at {result["instance_cores"]:.2f} cores of '
            f'{move["expected"]["instance_cores"]:.2f} moved: load '
            f'{"stayed" if result["load_stayed"] else "did not stay"}')
