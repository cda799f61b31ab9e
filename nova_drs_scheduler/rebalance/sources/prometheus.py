"""Metric source reading host and instance load from Prometheus.

Each period runs the configured PromQL instant queries (host CPU, host
RAM, instance CPU, and the CPU contention of hosts and instances).
Prometheus being down, slow or answering an error raises
:class:`~.base.MetricsUnavailable`, so the period makes no moves; a host or
instance missing from the answer is left out (not judged); a nonsensical
value is logged once and left out.  Contention only adds to what CPU
shows: a host without it, or every host when its query fails, is judged
on its CPU alone (logged once), and the period goes on.
"""

import math
import re
import time

from oslo_log import log as logging

from nova_drs_scheduler import extras
from nova_drs_scheduler import log_once
from nova_drs_scheduler.planning.metrics import HostSample
from nova_drs_scheduler.rebalance.sources import base

LOG = logging.getLogger(__name__)
requests = extras.load('prometheus', 'requests',
                       '[drs] metrics_source = prometheus')


class PrometheusSource(base.MetricsSource):

    def __init__(self, conf):
        super().__init__(conf)
        self.opts = conf.drs_prometheus
        self.host_pattern = re.compile(self.opts.host_label_pattern)
        self.session = requests.Session()
        if self.opts.username:
            self.session.auth = (self.opts.username, self.opts.password)
        if self.opts.cert_file:
            self.session.cert = (self.opts.cert_file, self.opts.key_file)
        self.session.verify = (False if self.opts.insecure
                               else self.opts.ca_file or True)

    def query(self, promql: str) -> list:
        """``[(labels, value)]`` of an instant query; raises if unusable."""
        headers = {}
        if self.opts.bearer_token_file:
            with open(self.opts.bearer_token_file) as handle:
                headers['Authorization'] = 'Bearer ' + handle.read().strip()
        url = self.opts.url.rstrip('/') + '/api/v1/query'
        try:
            response = self.session.get(
                url, params={'query': promql}, headers=headers,
                timeout=self.opts.timeout)
        except requests.RequestException as exc:
            raise base.MetricsUnavailable(
                f'Prometheus query to {url} failed: {exc}') from exc
        try:
            body = response.json()
        except ValueError:
            body = {'errorType': f'HTTP {response.status_code}',
                    'error': response.text[:200]}
        if body.get('status') != 'success':
            raise base.MetricsUnavailable(
                f'Prometheus at {url} answered {body.get("errorType")}: '
                f'{body.get("error")} (query: {promql})')
        data = body.get('data') or {}
        if data.get('resultType') != 'vector':
            raise base.MetricsUnavailable(
                f'Prometheus query must return an instant vector, got '
                f'{data.get("resultType")!r}: {promql}')
        results = []
        for series in data.get('result') or ():
            try:
                results.append((series['metric'],
                                float(series['value'][1])))
            except (KeyError, IndexError, TypeError, ValueError):
                log_once.warning(LOG, ('prometheus-series', repr(series)),
                                 'Ignoring malformed Prometheus series %r.',
                                 series)
        return results

    def _by_host(self, promql: str, wanted: set, what: str,
                 maximum: float = 100.0) -> dict:
        values = {}
        for labels, value in self.query(promql):
            host = self._host_name(labels.get(self.opts.host_label))
            if host not in wanted:
                continue
            if not math.isfinite(value) or not 0 <= value <= maximum:
                log_once.warning(
                    LOG, ('prometheus', host, what, 'invalid'),
                    'Host %s: ignoring invalid %s %r from Prometheus '
                    '(expected 0-%g).', host, what, value, maximum)
                continue
            values[host] = value
        return values

    def _contention(self, promql: str, what: str, read) -> dict:
        """``read(promql)``, or nothing when the query is off or fails:
        contention is a view beside CPU, not worth a period."""
        if not promql:
            return {}
        try:
            return read(promql)
        except base.MetricsUnavailable as exc:
            log_once.warning(LOG, ('prometheus', what, 'failed'),
                             '%s; seen by CPU alone until it answers.', exc)
            return {}

    def _host_name(self, label):
        if not label:
            return None
        match = self.host_pattern.search(label)
        return match.group(1) if match and match.groups() else label

    def host_samples(self, context, hosts):
        wanted = set(hosts)
        cpu = self._by_host(self.opts.host_cpu_query, wanted, 'CPU percent')
        ram = (self._by_host(self.opts.host_ram_query, wanted, 'RAM percent')
               if self.opts.host_ram_query else {})
        waiting = self._contention(
            self.opts.host_contention_query, 'host contention',
            lambda promql: self._by_host(promql, set(cpu),
                                         'CPU contention cores', math.inf))
        now = time.time()
        for host in sorted(wanted - set(cpu)):
            log_once.warning(LOG, ('prometheus', host, 'missing'),
                             'Host %s: no CPU series in Prometheus; it is '
                             'not judged.', host)
        if self.opts.host_contention_query:
            for host in sorted(set(cpu) - set(waiting)):
                log_once.info(LOG, ('prometheus', host, 'no contention'),
                              'Host %s: no CPU contention series in '
                              'Prometheus; seen by its CPU alone.', host)
        return {host: HostSample(timestamp=now, cpu_percent=value,
                                 ram_percent=ram.get(host),
                                 cpu_waiting=waiting.get(host))
                for host, value in cpu.items()}

    def instance_loads(self, context, instances):
        return self._by_instance(self.opts.instance_cpu_query, instances,
                                 'CPU load')

    def instance_waits(self, context, instances):
        return self._contention(
            self.opts.instance_contention_query, 'instance contention',
            lambda promql: self._by_instance(promql, instances,
                                             'vCPU wait'))

    def _by_instance(self, promql: str, instances, what: str) -> dict:
        """{uuid: cores} of ``instances``; a value outside 0 to the
        instance's vCPUs is nonsense, logged and left out."""
        vcpus = {instance.uuid: instance.vcpus for instance in instances}
        values = {}
        for labels, cores in self.query(promql):
            uuid = labels.get(self.opts.instance_label)
            if uuid not in vcpus:
                continue
            if not math.isfinite(cores) or not 0 <= cores <= vcpus[uuid]:
                log_once.warning(
                    LOG, ('prometheus', uuid, what, 'invalid'),
                    'Instance %s: ignoring invalid %s %r cores from '
                    'Prometheus (it has %s vCPUs).', uuid, what, cores,
                    vcpus[uuid])
                continue
            values[uuid] = cores
        return values
