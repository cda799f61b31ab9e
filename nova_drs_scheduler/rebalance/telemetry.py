"""The rebalancer's Prometheus metrics, for Grafana.

Each :class:`Telemetry` has its own registry (several rebalancers may live
in one test process); :meth:`Telemetry.serve` exposes it over HTTP with
prometheus_client's server, which runs in a thread (a green thread under
eventlet).  Host series come from the leader's periods: a process that is
not the leader reports none, so summing over schedulers never counts a
host twice.
"""

import prometheus_client
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class Telemetry:

    def __init__(self):
        self.registry = prometheus_client.CollectorRegistry()
        host = ['host']

        def gauge(name, text, labels=()):
            return prometheus_client.Gauge(
                name, text, labels, registry=self.registry)

        def counter(name, text, labels=()):
            return prometheus_client.Counter(
                name, text, labels, registry=self.registry)

        self._cpu = gauge('nova_drs_host_cpu_percent',
                          'Window average of the host\'s CPU, percent.',
                          host)
        self._ram = gauge('nova_drs_host_ram_percent',
                          'Window average of the host\'s RAM, percent.',
                          host)
        self._counter = gauge(
            'nova_drs_host_counter',
            'Consecutive periods the host has been over its threshold.',
            host)
        self._violated = gauge(
            'nova_drs_host_violated',
            '1 when the host is violated (stabilization reached).', host)
        self._threshold = gauge('nova_drs_host_cpu_threshold_percent',
                                'The host\'s effective CPU threshold.', host)
        self._ran = counter('nova_drs_periods_run',
                            'Rebalance periods led by this process.')
        self._skipped = counter(
            'nova_drs_periods_skipped',
            'Rebalance periods skipped, by reason (automation_off, '
            'not_leader, metrics, database).', ['reason'])
        self._moves = counter(
            'nova_drs_moves',
            'Moves by stage: planned, then started, completed, failed, '
            'timed_out, unknown or not_started.', ['status'])
        self._duration = prometheus_client.Histogram(
            'nova_drs_period_duration_seconds',
            'Wall time of a period led by this process.',
            registry=self.registry,
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
        self._leader = gauge('nova_drs_leader',
                             '1 while this process is the rebalancer.')
        self._maintenance = gauge(
            'nova_drs_maintenance_hosts',
            'Hosts in maintenance, by state (draining, drained, blocked, '
            'queued).',
            ['state'])
        self._left = gauge(
            'nova_drs_maintenance_instances_left',
            'Instances still on a host in maintenance.', host)
        self._drain_moves = gauge(
            'nova_drs_maintenance_moves',
            'Moves off a host in maintenance since it entered it, by '
            'status (completed, failed, in_flight).', ['host', 'status'])
        self._relief = counter(
            'nova_drs_relief_checks',
            'Moves whose relief was checked relief_check_delay after they '
            'completed, by whether the plan\'s expectation held (source '
            'at or under its threshold, destination at or under its own).',
            ['held'])
        for held in ('true', 'false'):  # Both series from zero.
            self._relief.labels(held=held)
        self._power = gauge(
            'nova_drs_power_hosts',
            'Hosts by power state: on (in their pool), entering (being '
            'emptied for standby), standby (powered off) and waking.',
            ['state'])
        self._power_actions = counter(
            'nova_drs_power_actions',
            'Power management actions (standby, wake, cancel, power_off, '
            'power_on, enable) by result (done, failed, recommended).',
            ['action', 'result'])
        self._standby_seconds = counter(
            'nova_drs_standby_host_seconds',
            'Host-seconds spent in standby: host-hours saved, once divided '
            'by 3600.')
        #: {host series: names it has now}
        self._shown = {series: set() for series in (
            self._cpu, self._ram, self._counter, self._violated,
            self._threshold)}
        self.server = None

    def serve(self, host: str, port: int) -> None:
        """Serve the metrics on ``host:port`` (once per process)."""
        if self.server is not None:
            return
        try:
            self.server, _thread = prometheus_client.start_http_server(
                port, host, registry=self.registry)
        except OSError as exc:
            LOG.warning('DRS metrics endpoint not served on %s:%s: %s',
                        host, port, exc)
            return
        LOG.info('DRS metrics served on http://%s:%s/metrics', host, port)

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def leader(self, is_leader: bool) -> None:
        self._leader.set(1 if is_leader else 0)
        if not is_leader:
            self._clear_hosts()

    def ran(self, seconds: float) -> None:
        self._ran.inc()
        self._duration.observe(seconds)

    def skipped(self, reason: str) -> None:
        self._skipped.labels(reason=reason).inc()

    def moves(self, status: str, count: int) -> None:
        if count:
            self._moves.labels(status=status).inc(count)

    def relief_checked(self, held: bool) -> None:
        self._relief.labels(held='true' if held else 'false').inc()

    def hosts(self, verdicts: list[dict]) -> None:
        """Replace the host series by this period's verdicts.

        A host's series are kept from one period to the next and only the
        ones this period leaves out are removed: making thousands of them
        anew each period cost a large part of recording one.
        """
        shown = {series: set() for series in self._shown}
        for verdict in verdicts:
            name = verdict['host']
            for series, value in (
                    (self._cpu, verdict.get('cpu_percent')),
                    (self._ram, verdict.get('ram_percent')),
                    (self._threshold, verdict.get('cpu_threshold')),
                    (self._counter, verdict.get('counter', 0)),
                    (self._violated,
                     1 if verdict.get('violated') else 0)):
                if value is not None:
                    series.labels(name).set(value)
                    shown[series].add(name)
        for series, names in self._shown.items():
            for name in names - shown[series]:
                series.remove(name)
        self._shown = shown

    def maintenance(self, hosts: list[dict]) -> None:
        """Replace the maintenance series by the leader's report
        (``Store.maintenance`` rows)."""
        for series in (self._maintenance, self._left, self._drain_moves):
            series.clear()
        for state in ('draining', 'drained', 'blocked', 'queued'):
            self._maintenance.labels(state=state).set(sum(
                1 for row in hosts if row['state'] == state))
        for row in hosts:
            if row['state'] == 'queued':
                continue  # Not drained yet: no instances left, no moves.
            progress = row.get('progress') or {}
            if 'instances' in progress:
                self._left.labels(row['host']).set(progress['instances'])
            for status, count in row['moves'].items():
                self._drain_moves.labels(row['host'], status).set(count)

    def power(self, states: dict[str, int]) -> None:
        """Replace the power series: hosts per state."""
        for state in ('on', 'entering', 'standby', 'waking'):
            self._power.labels(state=state).set(states.get(state, 0))

    def power_action(self, action: str, result: str) -> None:
        self._power_actions.labels(action=action, result=result).inc()

    def standby_seconds(self, seconds: float) -> None:
        self._standby_seconds.inc(max(0.0, seconds))

    def _clear_hosts(self) -> None:
        for series in self._shown:
            series.clear()
        self._shown = {series: set() for series in self._shown}
        for series in (self._maintenance, self._left, self._drain_moves):
            series.clear()
