"""Power management against the live cloud: the leader's side of the pure
:mod:`~nova_drs_scheduler.planning.power` plan, which the planner's
consolidation goal makes.

A host goes to standby in three steps, each period re-read from the DRS
database so that any leader continues where the last one stopped:

1. *entering*: nova-drs disables its compute service (reason
   ``nova-drs: standby: ...``) and the planner's drain empties it, as a
   maintenance drain does;
2. once empty, the power driver powers it off: *standby*;
3. a wake powers it on (*waking*); once its ``nova-compute`` reports up,
   nova-drs enables the service again and forgets the row.

Whatever fails leaves the host on and in its pool: a drain that blocks or
a power-off the driver refuses gives the host back (service enabled, row
deleted), with one clear error in the log.
"""

import dataclasses
import datetime
import time
from collections.abc import Mapping

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs_scheduler import conf
from nova_drs_scheduler.conf import power as power_conf
from nova_drs_scheduler.db import store as db_store
from nova_drs_scheduler.planning import drain
from nova_drs_scheduler.planning import model
from nova_drs_scheduler.planning import planner
from nova_drs_scheduler.planning import power
from nova_drs_scheduler.planning import working
from nova_drs_scheduler.power import base as power_base
from nova_drs_scheduler.power import loading as power_loading
from nova_drs_scheduler.rebalance import compute_service
from nova_drs_scheduler.rebalance import daily_shapes

CONF = conf.CONF
LOG = logging.getLogger(__name__)

#: What the disabled reason says: ``nova-drs: standby``.
PURPOSE = 'standby'


def entering(rows: Mapping[str, dict]) -> set:
    """The hosts being emptied for standby."""
    return {host for host, row in rows.items()
            if row['state'] == model.ENTERING}


def with_power(snapshot: model.Snapshot, rows: Mapping[str, dict],
               maintenance, woken: Mapping[str, float] | None = None
               ) -> model.Snapshot:
    """The snapshot with each host's power state from its stored row (no
    row: on) and the seconds since it last left standby (``woken``, from
    :func:`woken_ago`); a host entering standby or in ``maintenance``
    drains."""
    woken = woken or {}
    hosts = dict(snapshot.hosts)
    changed = False
    for name, host in snapshot.hosts.items():
        state = rows[name]['state'] if name in rows else model.ON
        draining = name in maintenance or state == model.ENTERING
        ago = woken.get(name)
        if (host.power, host.draining, host.woken_ago) != (state, draining,
                                                           ago):
            hosts[name] = dataclasses.replace(host, power=state,
                                              draining=draining,
                                              woken_ago=ago)
            changed = True
    return dataclasses.replace(snapshot, hosts=hosts) if changed \
        else snapshot


def woken_ago(store, now: datetime.datetime,
              within: float) -> dict[str, float]:
    """``{host: seconds}`` since each host last left standby, for those
    that did within ``within`` seconds (a pool levels that long after a
    wake, ``[drs] level_after_wake``); none when ``within`` is 0, or
    when the DRS database cannot say (logged: the pools level only while
    a host is held out)."""
    if within <= 0:
        return {}
    try:
        left = store.left_standby()
    except db_exc.DBError as exc:
        LOG.warning('DRS power: when hosts left standby is unreadable, no '
                    'pool levels for a wake this period: %s', exc)
        return {}
    found = {}
    for host, when in left.items():
        ago = max(0.0, (now - when).total_seconds())
        if ago < within:
            found[host] = ago
    return found


def unmanaged(snapshot: model.Snapshot, driver: power_base.PowerDriver,
              refused=frozenset()) -> model.Snapshot:
    """The snapshot with power management off for the hosts on that the
    driver cannot switch, or whose power-off it ``refused`` lately, so that
    none is emptied for a power-off that cannot happen."""
    hosts = {name: dataclasses.replace(host, power_level='off')
             for name, host in snapshot.hosts.items()
             if host.power == model.ON and host.power_level != 'off'
             and (name in refused or not driver.manages(name))}
    if not hosts:
        return snapshot
    return dataclasses.replace(snapshot, hosts={**snapshot.hosts, **hosts})


def counts(snapshot: model.Snapshot) -> dict[str, int]:
    """Hosts per power state, for the metrics."""
    found = {}
    for host in snapshot.hosts.values():
        found[host.power] = found.get(host.power, 0) + 1
    return found


def wake_pools(snapshot: model.Snapshot) -> set:
    """The pool where a boot that found no valid host wakes a host: the
    pool of the standby host with the most vCPUs under power management
    (a request does not say which pool it wanted)."""
    asleep = [host for host in snapshot.hosts.values()
              if host.power == model.STANDBY and host.power_level != 'off']
    if not asleep:
        return set()
    host = min(asleep, key=lambda h: (-h.vcpus, h.name))
    return {working.pool_key(host, snapshot.config)}


class PowerPeriod:
    """Power management's step of each period, in the leader.

    The forecasts and spare counters live in memory (a new leader learns
    them again within ``power_low_periods``), except the pools' daily
    shapes, which a leader reads from the DRS database when it starts
    leading and stores bin by bin; the hosts' power states live in the DRS
    database, so any leader follows them on.
    """

    def __init__(self, store, telemetry):
        self.store = store
        self.telemetry = telemetry
        self.forecasts: dict = {}
        self.counters: dict = {}
        #: Whether :attr:`forecasts` hold the daily shapes stored when
        #: this scheduler started leading.
        self._shapes_read = False
        #: Seconds from power-on to service up, as measured here; None
        #: until a wake has been seen through.
        self.boot_seconds: float | None = None
        self._driver = None
        self._last: float | None = None
        #: Seconds on the forecasts' clock (tests step it period by
        #: period).
        self.clock = time.time
        #: Hosts whose power-off the driver refused, and when: left out of
        #: power management for ``[drs] quarantine_time``.
        self.refused: dict[str, datetime.datetime] = {}

    @property
    def driver(self) -> power_base.PowerDriver:
        """``[drs] power_driver``, built at first use (the service builds
        it at start when ``power_management`` is on: :meth:`prepare`)."""
        if self._driver is None:
            self._driver = power_loading.load(CONF)
        return self._driver

    def prepare(self) -> None:
        """At service start: the driver, or one clear error naming the
        option, when ``[drs] power_management`` is on or a driver other
        than ``noop`` is set (aggregates may turn it on later)."""
        if (CONF.drs.power_management != 'off'
                or CONF.drs.power_driver != 'noop'):
            try:
                self._driver = power_loading.load(CONF)
            except ValueError as exc:
                raise conf.ConfigError(str(exc)) from exc

    def config(self) -> power.PowerConfig:
        """``[drs]``'s power options, the boot time as measured once
        known."""
        found = power.PowerConfig.from_conf(CONF)
        if self.boot_seconds is not None:
            found = dataclasses.replace(found,
                                        boot_seconds=self.boot_seconds)
        return found

    def stand_down(self) -> None:
        """Another scheduler leads: the shapes it learns meanwhile are read
        again when this one leads next."""
        self._shapes_read = False

    def request_wake(self, reason: str) -> None:
        """A request found no valid host: when a host is in standby, ask
        the leader to wake one.  Never raises: the request's own error is
        what its caller must see."""
        try:
            if any(row['state'] == model.STANDBY
                   for row in self.store.power_hosts().values()):
                self.store.request_wake(None, reason)
                LOG.info('DRS power: a host in standby is to wake: %s',
                         reason)
        except db_exc.DBError as exc:
            LOG.warning('DRS power: no wake requested, the DRS database '
                        'is not usable: %s', exc)

    def needs_instances(self, snapshot: model.Snapshot) -> set:
        """Hosts whose instances the period must read for :func:`plan`:
        judged on the counters :meth:`run` will plan with, this period's
        demand counted (the last period's would miss the period a
        counter reaches ``power_low_periods``, and :func:`plan` would see
        the hosts empty)."""
        cfg = self.config()
        _, counters = power.observe(snapshot, self.forecasts, self.counters,
                                    self.clock(), cfg)
        return power.needs_instances(snapshot, counters, cfg)

    def preview(self, rec: dict, snapshot: model.Snapshot, candidates,
                rows: Mapping[str, dict]) -> None:
        """The power plan of a dry run, into ``rec``, each pool with what
        its standby hosts saved so far; nothing changes."""
        if not _in_use(snapshot, rows):
            return
        cfg = self.config()
        found = _consolidate(snapshot, candidates, power.PowerInputs(
            self.forecasts, self.counters, cfg))
        rec['power'] = dict(found.to_dict(), hosts=_shown(rows))
        seconds = self.store.standby_seconds()
        for pool in rec['power']['pools']:
            hours = seconds.get(pool['pool'], 0.0) / 3600.0
            kwh = power_conf.saved_kwh(CONF, hours)
            pool.update(reserve_hosts=cfg.reserve_hosts,
                        standby_host_hours=round(hours, 3),
                        saved_kwh=None if kwh is None else round(kwh, 3))

    def run(self, rec: dict, period, rows: Mapping[str, dict],
            maintenance) -> None:
        """Follow the hosts on their way, then plan and act (or
        recommend); the plan and the hosts' states go into ``rec``."""
        if not _in_use(period.snapshot, rows):
            return
        cfg = self.config()
        if not self._shapes_read:
            self.forecasts = daily_shapes.load(self.store)
            self._shapes_read = True
        learnt = self.forecasts
        self.forecasts, self.counters = power.observe(
            period.snapshot, self.forecasts, self.counters, self.clock(),
            cfg)
        daily_shapes.save(self.store, learnt, self.forecasts)
        acting = HostPower(self.store, self.driver, self.telemetry,
                           self.refused)
        up = {name: found.up for name, found in period.cloud.hosts.items()}
        self._learn(acting.follow(
            rows, {d.host: d for d in period.plan.drains}, up))
        self._approved(acting)
        back, rows = set(rows), self.store.power_hosts()
        self._count_again(period.snapshot, back - set(rows))
        snapshot = unmanaged(with_power(period.snapshot, rows, maintenance),
                             self.driver, self._refused())
        unplaced = wake_pools(snapshot) if self.store.take_wake_requests() \
            else set()
        found = _consolidate(
            dataclasses.replace(snapshot, planned=tuple(period.plan.moves)),
            period.candidates, power.PowerInputs(
                self.forecasts, self.counters, cfg, unplaced))
        rec['power'] = found.to_dict()
        rec['power']['notes'].extend(
            f'host {host}: its power-off was refused at {when:%H:%M:%S}; '
            f'left out of power management for [drs] quarantine_time'
            for host, when in sorted(self.refused.items()))
        levels = {pool.pool: pool.level for pool in found.pools}
        wanted = set()
        for action in found.actions:
            if (levels.get(action.pool) == 'automatic'
                    or action.kind == power.CANCEL):
                acting.act(action, rows.get(action.host))
            else:
                self.store.recommend_power(rec['id'], action.kind,
                                           action.host, action.reason)
                self.telemetry.power_action(action.kind, 'recommended')
                wanted.add((action.kind, action.host))
        self._expire(wanted)
        rows = self.store.power_hosts()
        rec['power']['hosts'] = _shown(rows)
        self._account(with_power(snapshot, rows, maintenance))

    def _refused(self) -> set:
        """The hosts refused within ``quarantine_time``; the others are
        forgotten."""
        since = timeutils.utcnow() - datetime.timedelta(
            seconds=CONF.drs.quarantine_time)
        self.refused = {host: when for host, when in self.refused.items()
                        if when > since}
        return set(self.refused)

    def _count_again(self, snapshot: model.Snapshot, back) -> None:
        """The pools of the hosts ``back`` in service (woken and up, or
        given back) count their quiet periods from 0: the demand that woke
        a host, or a failed standby, is not followed by a standby of the
        same host in the same period."""
        for name in back:
            host = snapshot.hosts.get(name)
            if host is not None:
                self.counters[working.pool_key(host, snapshot.config)] = 0

    def _learn(self, booted: Mapping[str, float]) -> None:
        """The boot time to plan with: the driver's where it measures
        one, else power-on to service up as seen here; the mean of the
        last and the newest."""
        for host, seen in sorted(booted.items()):
            measured = self.driver.boot_seconds(host) or seen
            self.boot_seconds = measured if self.boot_seconds is None \
                else (self.boot_seconds + measured) / 2.0

    def _approved(self, acting: 'HostPower') -> None:
        """Carry out the power recommendations an operator approved."""
        rows = self.store.power_hosts()
        for found in self.store.recommendations((db_store.APPROVED,)):
            kind, host = found.get('action'), found['source']
            if not kind:
                continue
            state = rows.get(host, {}).get('state', model.ON)
            expected = model.ON if kind == power.STANDBY else model.STANDBY
            if state != expected:
                self.store.transition(found['id'], db_store.EXPIRED,
                                      (db_store.APPROVED,),
                                      f'host {host} is {state} now')
                continue
            handler = acting.standby if kind == power.STANDBY else \
                acting.wake
            done = handler(host, None, f'approved recommendation '
                           f'{found["id"]}: {found["reason"]}',
                           rows.get(host))
            self.telemetry.power_action(kind, done)
            self.store.transition(
                found['id'], db_store.COMPLETED if done == 'done'
                else db_store.FAILED, (db_store.APPROVED,),
                None if done == 'done' else 'see the scheduler log')

    def _expire(self, wanted: set) -> None:
        """Pending power recommendations this period no longer makes."""
        for found in self.store.recommendations((db_store.PENDING,)):
            if found.get('action') and (
                    found['action'], found['source']) not in wanted:
                self.store.transition(found['id'], db_store.EXPIRED,
                                      (db_store.PENDING,),
                                      'no longer recommended')

    def _account(self, snapshot: model.Snapshot) -> None:
        """The metrics: hosts per state, and standby host-seconds."""
        found = counts(snapshot)
        self.telemetry.power(found)
        now = time.monotonic()
        if self._last is not None:
            self.telemetry.standby_seconds(
                found.get(model.STANDBY, 0) * (now - self._last))
        self._last = now


def _consolidate(snapshot: model.Snapshot, candidates: model.CandidatesFn,
                 inputs: power.PowerInputs) -> power.PowerPlan:
    """The planner's consolidation goal alone, on ``snapshot``.

    The leader plans power after the period's plan, not within it: it
    first follows the hosts on their way, and an entering host is powered
    off once that plan's drain reports it empty, so the power plan reads
    the hosts' states as following left them.
    """
    return planner.plan(snapshot, candidates, (model.CONSOLIDATE,),
                        inputs).power


def _in_use(snapshot: model.Snapshot, rows: Mapping[str, dict]) -> bool:
    """Whether power management has anything to do or follow."""
    return bool(rows) or any(host.power_level != 'off'
                             for host in snapshot.hosts.values())


def _shown(rows: Mapping[str, dict]) -> dict:
    """Each host out of its pool: state, since when and why."""
    return {host: {'state': row['state'], 'reason': row['reason'],
                   'since': str(row['requested_at'])[:19],
                   'error': row['detail'].get('error')}
            for host, row in sorted(rows.items())}


class HostPower:
    """Acts on the power plan: the leader owns one."""

    def __init__(self, store, driver: power_base.PowerDriver, telemetry,
                 refused=None):
        self.store = store
        self.driver = driver
        self.telemetry = telemetry
        #: Where a refused power-off is noted, host -> when.
        self.refused = {} if refused is None else refused

    def act(self, action, row: dict | None) -> str:
        """Carry out one of the plan's actions; ``'done'`` or
        ``'failed'``."""
        handler = {'standby': self.standby, 'wake': self.wake,
                   'cancel': self.cancel}[action.kind]
        result = handler(action.host, action.pool, action.reason, row)
        self.telemetry.power_action(action.kind, result)
        return result

    def standby(self, host: str, pool: str | None, reason: str,
                row: dict | None) -> str:
        """Disable the service and let the drain empty the host."""
        try:
            service, ours = compute_service.disable(host, PURPOSE, reason)
        except compute_service.UnknownHostError as exc:
            LOG.error('DRS power: %s is not put in standby: %s', host, exc)
            return 'failed'
        if not ours:
            # Someone else disabled it: theirs to enable, not ours.
            LOG.warning('DRS power: %s is not put in standby: its service '
                        'is disabled by someone else (%s)', host,
                        service.disabled_reason)
            return 'failed'
        self.store.set_power(host, model.ENTERING, pool, reason,
                             disabled_by_drs=True, detail={})
        LOG.info('DRS power: %s enters standby: %s', host, reason)
        return 'done'

    def cancel(self, host: str, pool: str | None, reason: str,
               row: dict | None) -> str:
        """Give an entering host back to its pool."""
        self.give_back(host, row, reason)
        return 'done'

    def give_back(self, host: str, row: dict | None, why: str) -> None:
        """Enable the service again (if nova-drs disabled it) and forget
        the host's power state: it stays on and in its pool."""
        try:
            compute_service.enable(host, PURPOSE,
                                   bool(row and row['disabled_by_drs']))
        finally:
            self.store.forget_power(host)
        LOG.warning('DRS power: %s stays on and in its pool: %s', host, why)

    def wake(self, host: str, pool: str | None, reason: str,
             row: dict | None) -> str:
        """Power the host on; it stays *waking* until its compute service
        reports up (:meth:`follow`)."""
        try:
            self.driver.power_on(host)
        except power_base.PowerError as exc:
            LOG.error('DRS power: wake of %s failed, it stays in standby: '
                      '%s', host, exc)
            self.store.set_power(host, model.STANDBY,
                                 detail={'error': str(exc)})
            self.telemetry.power_action('power_on', 'failed')
            return 'failed'
        self.store.set_power(host, model.WAKING, pool, reason, detail={})
        self.telemetry.power_action('power_on', 'done')
        LOG.info('DRS power: waking %s: %s', host, reason)
        return 'done'

    def follow(self, rows: Mapping[str, dict], drains: Mapping,
               up: Mapping[str, bool]) -> dict[str, float]:
        """Move each host a step on: an emptied entering host is powered
        off, a blocked one given back, a woken one whose service is up
        enabled.  Returns the boot times measured, seconds by host."""
        booted = {}
        for host, row in sorted(rows.items()):
            if row['state'] == model.ENTERING:
                self._entering(host, row, drains.get(host))
            elif row['state'] == model.WAKING and up.get(host):
                compute_service.enable(host, PURPOSE, row['disabled_by_drs'])
                self.store.forget_power(host)
                booted[host] = (timeutils.utcnow() -
                                row['requested_at']).total_seconds()
                self.telemetry.power_action('enable', 'done')
                LOG.info('DRS power: %s is up after %.0f s and back in its '
                         'pool', host, booted[host])
        return booted

    def _entering(self, host: str, row: dict, found) -> None:
        if found is None:
            return  # Not in this period's snapshot: try again next period.
        state = drain.state(found)
        if state == drain.BLOCKED:
            self.give_back(host, row, 'standby given up, the host cannot be '
                           'emptied: ' + '; '.join(
                               f'{r.subject}: {r.detail or r.rule}'
                               for r in found.blockers))
            self.telemetry.power_action('standby', 'failed')
        elif state == drain.DRAINED:
            try:
                self.driver.power_off(host)
            except power_base.PowerError as exc:
                LOG.error('DRS power: power-off of %s failed: %s', host, exc)
                self.telemetry.power_action('power_off', 'failed')
                self.refused[host] = timeutils.utcnow()
                self.give_back(host, row, f'power-off failed: {exc}')
                return
            self.store.set_power(host, model.STANDBY, detail={})
            self.telemetry.power_action('power_off', 'done')
            LOG.info('DRS power: %s is empty and powered off (standby)',
                     host)
