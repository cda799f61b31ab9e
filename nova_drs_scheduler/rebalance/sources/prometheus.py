"""Metric source reading host and instance load from Prometheus.

Each period runs the configured PromQL instant queries (one for host CPU,
one for host RAM, one for instance CPU).  Prometheus being down, slow or
answering an error raises :class:`~.base.MetricsUnavailable`, so the
period makes no moves; a host or instance missing from the answer is left
out (not judged); a nonsensical value is logged once and left out.
"""

import math
import re
import time

from oslo_log import log as logging

from nova_drs_scheduler import extras
from nova_drs_scheduler import log_once
from nova_drs_scheduler.rebalance.metrics import HostSample
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

    def _by_host(self, promql: str, wanted: set, what: str) -> dict:
        values = {}
        for labels, value in self.query(promql):
            host = self._host_name(labels.get(self.opts.host_label))
            if host not in wanted:
                continue
            if not math.isfinite(value) or not 0 <= value <= 100:
                log_once.warning(
                    LOG, ('prometheus', host, what, 'invalid'),
                    'Host %s: ignoring invalid %s %r from Prometheus '
                    '(expected 0-100).', host, what, value)
                continue
            values[host] = value
        return values

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
        now = time.time()
        for host in sorted(wanted - set(cpu)):
            log_once.warning(LOG, ('prometheus', host, 'missing'),
                             'Host %s: no CPU series in Prometheus; it is '
                             'not judged.', host)
        return {host: HostSample(timestamp=now, cpu_percent=value,
                                 ram_percent=ram.get(host))
                for host, value in cpu.items()}

    def instance_loads(self, context, instances):
        vcpus = {instance.uuid: instance.vcpus for instance in instances}
        loads = {}
        for labels, cores in self.query(self.opts.instance_cpu_query):
            uuid = labels.get(self.opts.instance_label)
            if uuid not in vcpus:
                continue
            if not math.isfinite(cores) or not 0 <= cores <= vcpus[uuid]:
                log_once.warning(
                    LOG, ('prometheus', uuid, 'invalid'),
                    'Instance %s: ignoring invalid CPU load %r cores from '
                    'Prometheus (it has %s vCPUs).', uuid, cores,
                    vcpus[uuid])
                continue
            loads[uuid] = cores
        return loads
