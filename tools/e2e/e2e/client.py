"""Plain-HTTP clients of the deployed nova-api and placement-api."""

import time

import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

COMPUTE_VERSION = '2.95'


class ApiError(RuntimeError):
    pass


def _session() -> requests.Session:
    """A session that retries idempotent requests on a dropped connection
    (a restarting service, a keep-alive closed under us)."""
    session = requests.Session()
    retry = Retry(total=5, backoff_factor=0.5, status_forcelist=())
    session.mount('http://', HTTPAdapter(max_retries=retry))
    return session


class Nova:

    def __init__(self, url: str):
        self.url = url + '/v2.1'
        self.session = _session()
        self.session.headers.update({
            'X-Auth-Token': 'admin:admin',
            'OpenStack-API-Version': f'compute {COMPUTE_VERSION}',
            'Content-Type': 'application/json'})

    def request(self, method: str, path: str, body=None, ok=(200, 202,
                                                                204)):
        response = self.session.request(method, self.url + path, json=body,
                                        timeout=60)
        if response.status_code not in ok:
            raise ApiError(f'{method} {path}: {response.status_code} '
                           f'{response.text[:500]}')
        return response.json() if response.content else None

    def create_flavor(self, name: str, vcpus: int, ram: int, disk: int):
        return self.request('POST', '/flavors', {'flavor': {
            'name': name, 'vcpus': vcpus, 'ram': ram, 'disk': disk}})[
                'flavor']

    def create_aggregate(self, name: str, hosts, metadata: dict) -> dict:
        agg = self.request('POST', '/os-aggregates',
                           {'aggregate': {'name': name}})['aggregate']
        for host in hosts:
            self.request('POST', f'/os-aggregates/{agg["id"]}/action',
                         {'add_host': {'host': host}})
        self.request('POST', f'/os-aggregates/{agg["id"]}/action',
                     {'set_metadata': {'metadata': metadata}})
        return agg

    def set_aggregate_metadata(self, agg_id: int, metadata: dict) -> None:
        """Set keys; a None value removes the key."""
        self.request('POST', f'/os-aggregates/{agg_id}/action',
                     {'set_metadata': {'metadata': metadata}})

    def boot(self, name: str, flavor_id: str, image_id: str,
             host: str | None) -> dict:
        """Boot on ``host`` (microversion 2.74: the scheduler still runs
        its filters for the requested host), or where the scheduler
        chooses with None; no networks, so no Neutron.
        """
        server = {'name': name, 'flavorRef': flavor_id,
                  'imageRef': image_id, 'networks': 'none'}
        if host is not None:
            server['host'] = host
        return self.request('POST', '/servers', {'server': server})[
            'server']

    def action(self, uuid: str, body: dict) -> None:
        """``POST /servers/{uuid}/action``, e.g. ``{'os-stop': None}``."""
        self.request('POST', f'/servers/{uuid}/action', body)

    def server(self, uuid: str) -> dict:
        return self.request('GET', f'/servers/{uuid}')['server']

    def servers(self) -> list:
        return self.request('GET', '/servers/detail')['servers']

    def migrations(self) -> list:
        return self.request('GET', '/os-migrations')['migrations']

    def services(self, binary: str) -> list:
        return self.request('GET', f'/os-services?binary={binary}')[
            'services']


class Placement:

    def __init__(self, url: str):
        self.url = url
        self.session = _session()
        self.session.headers.update({
            'X-Auth-Token': 'admin:admin',
            'OpenStack-API-Version': 'placement latest'})

    def get(self, path: str) -> dict:
        response = self.session.get(self.url + path, timeout=30)
        if response.status_code != 200:
            raise ApiError(f'GET {path}: {response.status_code} '
                           f'{response.text[:300]}')
        return response.json()

    def providers(self) -> dict:
        """{resource provider uuid: name}"""
        return {rp['uuid']: rp['name']
                for rp in self.get('/resource_providers')[
                    'resource_providers']}

    def allocation_hosts(self, consumer: str, providers: dict) -> list:
        allocations = self.get(f'/allocations/{consumer}')['allocations']
        return sorted(providers.get(rp, rp) for rp in allocations)

    def provider_uuid(self, name: str) -> str:
        return next(uuid for uuid, found in self.providers().items()
                    if found == name)

    def consumers(self, provider: str) -> list:
        """The consumers (instances, migrations) holding resources of
        ``provider``."""
        return sorted(self.get(f'/resource_providers/{provider}/'
                               'allocations')['allocations'])

    def traits(self, provider: str) -> list:
        return self.get(f'/resource_providers/{provider}/traits')['traits']


def poll(fetch, done, timeout: float, interval: float = 2.0):
    """Call ``fetch`` until ``done(value)``; return the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(interval)
