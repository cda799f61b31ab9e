"""Config files of the deployment: nova.conf per service, placement.conf
and nova-api's paste pipeline.

Everything the services need is in these files; only the WSGI apps get
an environment variable (the config directory, as their docs require).
"""

import configparser
import os

#: nova-api's paste pipeline: Nova's own, with ``e2e.noauth`` where
#: keystonemiddleware's ``authtoken`` would be.
API_PASTE = """\
[composite:osapi_compute]
use = call:nova.api.openstack.urlmap:urlmap_factory
/: oscomputeversions
/v2.1: oscomputeversion_v2
/v2.1/+: openstack_compute_api_v21

[composite:openstack_compute_api_v21]
use = call:nova.api.auth:pipeline_factory_v21
keystone = compute_req_id faultwrap request_log sizelimit e2e_noauth \
keystonecontext osapi_compute_app_v21

[filter:e2e_noauth]
paste.filter_factory = e2e.noauth:filter_factory

[filter:request_log]
paste.filter_factory = nova.api.openstack.requestlog:RequestLog.factory

[filter:compute_req_id]
paste.filter_factory = nova.api.compute_req_id:ComputeReqIdMiddleware.factory

[filter:faultwrap]
paste.filter_factory = nova.api.openstack:FaultWrapper.factory

[filter:sizelimit]
paste.filter_factory = oslo_middleware:RequestBodySizeLimiter.factory

[filter:keystonecontext]
paste.filter_factory = nova.api.auth:NovaKeystoneContext.factory

[app:osapi_compute_app_v21]
paste.app_factory = nova.api.openstack.compute:APIRouterV21.factory

[pipeline:oscomputeversions]
pipeline = faultwrap request_log oscomputeversionapp

[pipeline:oscomputeversion_v2]
pipeline = compute_req_id faultwrap request_log oscomputeversionapp_v2

[app:oscomputeversionapp]
paste.app_factory = nova.api.openstack.compute.versions:Versions.factory

[app:oscomputeversionapp_v2]
paste.app_factory = nova.api.openstack.compute.versions:VersionsV2.factory
"""


#: Seconds between rebalance periods of the schedulers under test.
REBALANCE_INTERVAL = 6


class Layout:
    """Ports and URLs every config file is written from."""

    def __init__(self, base, db, rabbit, redis, placement_port, api_port,
                 fakes_port, exporter_ports):
        self.base = base
        self.db = db
        self.rabbit = rabbit
        self.redis = redis
        self.placement_url = f'http://127.0.0.1:{placement_port}'
        self.api_url = f'http://127.0.0.1:{api_port}'
        self.fakes_url = f'http://127.0.0.1:{fakes_port}'
        #: {scheduler host: its [drs] exporter_port}
        self.exporter_ports = exporter_ports

    def service_dir(self, name: str) -> str:
        path = os.path.join(self.base, name)
        os.makedirs(path, exist_ok=True)
        return path


def _write(path: str, sections: dict) -> str:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    for section, options in sections.items():
        parser[section] = {k: str(v) for k, v in options.items()}
    with open(path, 'w') as handle:
        parser.write(handle)
    return path


def _nova_common(layout: Layout, host: str, state: str) -> dict:
    token_auth = {'auth_type': 'admin_token', 'token': 'admin:admin'}
    return {
        'DEFAULT': {
            'host': host, 'my_ip': '127.0.0.1',
            'transport_url': layout.rabbit.transport_url,
            'state_path': state,
            'instances_path': os.path.join(state, 'instances'),
            'periodic_fuzzy_delay': 0, 'report_interval': 5,
            'service_down_time': 30, 'debug': False,
        },
        'api_database': {'connection': layout.db.url('nova_api')},
        'database': {'connection': layout.db.url('nova')},
        'oslo_concurrency': {'lock_path': os.path.join(state, 'locks')},
        'oslo_messaging_notifications': {'driver': 'noop'},
        'oslo_messaging_rabbit': {'rabbit_retry_interval': 1,
                                  'rabbit_retry_backoff': 1},
        'placement': dict(token_auth, endpoint=layout.placement_url,
                          endpoint_override=layout.placement_url),
        'glance': {'api_servers': layout.fakes_url},
        'neutron': dict(token_auth, endpoint=layout.fakes_url,
                        endpoint_override=layout.fakes_url),
        'cinder': {'os_region_name': 'RegionOne'},
        # 11 servers in one project: more than the default quota of 10.
        'quota': {'instances': -1, 'cores': -1, 'ram': -1},
        'wsgi': {'api_paste_config':
                 os.path.join(layout.base, 'nova-api', 'api-paste.ini')},
    }


def placement(layout: Layout) -> str:
    """placement.conf in its own directory (OS_PLACEMENT_CONFIG_DIR)."""
    path = layout.service_dir('placement')
    _write(os.path.join(path, 'placement.conf'), {
        'DEFAULT': {'debug': False},
        'api': {'auth_strategy': 'noauth2'},
        'placement_database': {'connection': layout.db.url('placement')},
    })
    return path


def nova_api(layout: Layout) -> str:
    """nova.conf and api-paste.ini in nova-api's OS_NOVA_CONFIG_DIR."""
    path = layout.service_dir('nova-api')
    with open(os.path.join(path, 'api-paste.ini'), 'w') as handle:
        handle.write(API_PASTE)
    sections = _nova_common(layout, 'api', path)
    _write(os.path.join(path, 'nova.conf'), sections)
    return path


def conductor(layout: Layout) -> str:
    path = layout.service_dir('nova-conductor')
    sections = _nova_common(layout, 'conductor', path)
    sections['conductor'] = {'workers': 1}
    return _write(os.path.join(path, 'nova.conf'), sections)


def scheduler(layout: Layout, host: str) -> str:
    """The DRS recipe of doc/deployment.md, with short periods."""
    path = layout.service_dir(f'nova-drs-scheduler-{host}')
    sections = _nova_common(layout, host, path)
    sections['scheduler'] = {
        'driver': 'drs_scheduler', 'host_manager': 'caching_host_manager',
        'workers': 1, 'discover_hosts_in_cells_interval': -1}
    sections['filter_scheduler'] = {
        'enabled_filters': 'ComputeFilter,ComputeCapabilitiesFilter,'
                           'ImagePropertiesFilter,AggregateCoreFilter,'
                           'AggregateRamFilter,DRSPoolFilter,'
                           'UtilizationFilter',
        'weight_classes': 'nova_drs_scheduler.weighers.all_weighers',
    }
    sections['drs_host_cache'] = {'max_staleness': 1}
    sections['drs'] = {
        'automation': 'automatic', 'mode': 'aggregate',
        'cpu_threshold': 80, 'ram_threshold': 100, 'margin': 10,
        'window': 2, 'stabilization': 2,
        'rebalance_interval': REBALANCE_INTERVAL,
        'metrics_max_age': 30, 'max_migrations_per_period': 1,
        # One drain move at a time (Nova's max_concurrent_live_migrations,
        # which the drain follows), each ended move followed by the next
        # within a second: the failover lands mid-drain.
        'drain_flow_interval': 1,
        'instance_cooldown': 3600, 'migration_timeout': 120,
        'coordination_backend_url': layout.redis.url,
        'exporter_port': layout.exporter_ports[host],
        'exporter_host': '127.0.0.1',
    }
    # One DRS database for both schedulers, on Nova's MariaDB server.
    sections['drs_database'] = {'connection': layout.db.url('nova_drs')}
    text_path = os.path.join(path, 'nova.conf')
    _write(text_path, sections)
    # available_filters is a MultiStrOpt: configparser cannot repeat keys.
    with open(text_path, 'a') as handle:
        handle.write('[filter_scheduler]\n'
                     'available_filters = nova.scheduler.filters.all_filters\n'
                     'available_filters = '
                     'nova_drs_scheduler.filters.all_filters\n')
    return text_path


def compute(layout: Layout, host: str) -> tuple[str, str]:
    """(nova.conf, state_path) of one fake compute."""
    path = layout.service_dir(f'nova-compute-{host}')
    sections = _nova_common(layout, host, path)
    del sections['database'], sections['api_database']
    sections['DEFAULT'].update({
        'compute_driver': 'filecpu.FileCPUDriver',
        'compute_monitors': 'cpu.virt_driver',
        'update_resources_interval': 3,
    })
    return _write(os.path.join(path, 'nova.conf'), sections), path

