"""The scheduler service: manager and host manager chosen by name.

``create_server`` is what ``nova-drs-scheduler`` runs after parsing
nova.conf; tests call it directly with the harness's config.
"""

from nova import config
from nova import objects
from nova import service
from nova import version
from nova.scheduler import rpcapi
from oslo_concurrency import processutils
from oslo_config import cfg
from oslo_log import log as logging
from oslo_reports import guru_meditation_report as gmr
from oslo_reports import opts as gmr_opts

from nova_drs_scheduler import compat
from nova_drs_scheduler import concurrency
from nova_drs_scheduler import conf as drs_conf
from nova_drs_scheduler import drivers
from nova_drs_scheduler import extras

LOG = logging.getLogger(__name__)


def manager_path(conf: cfg.ConfigOpts) -> str:
    """Dotted path of the manager to run, after checking all our options.

    Raises ConfigError naming the option for an unknown driver or host
    manager, or any invalid value of ours, before anything starts.
    """
    drivers.translate_legacy(conf)
    drs_conf.validate(conf)
    drivers.host_manager_class(conf)
    return drivers.class_path(drivers.manager_class(conf))


def apply_host_manager(scheduler_manager, conf: cfg.ConfigOpts) -> None:
    """Give the manager the host manager ``[scheduler] host_manager`` names.

    Unset, the manager keeps its own (Nova's stock manager builds its
    HostManager in ``__init__``; there is no hook to choose it earlier).
    """
    host_manager_cls = drivers.host_manager_class(conf)
    if host_manager_cls is not None and not isinstance(
            scheduler_manager.host_manager, host_manager_cls):
        scheduler_manager.host_manager = host_manager_cls()
    LOG.info('nova-drs-scheduler: manager %s, host manager %s, '
             'concurrency %s',
             drivers.class_path(type(scheduler_manager)),
             drivers.class_path(type(scheduler_manager.host_manager)),
             concurrency.backend())


def create_server(conf: cfg.ConfigOpts) -> service.Service:
    """Create the (not yet started) scheduler service from parsed config."""
    server = service.Service.create(
        binary='nova-scheduler', topic=rpcapi.RPC_TOPIC,
        manager=manager_path(conf))
    apply_host_manager(server.manager, conf)
    return server


def main(argv: list) -> None:
    """Parse nova.conf as nova-scheduler does, then serve."""
    config.parse_args(argv)
    logging.setup(drs_conf.CONF, 'nova')
    objects.register_all()
    gmr_opts.set_defaults(drs_conf.CONF)
    objects.Service.enable_min_version_cache()
    try:
        server = create_server(drs_conf.CONF)
    except (drs_conf.ConfigError, extras.MissingExtraError) as exc:
        raise SystemExit(f'nova-drs-scheduler: {exc}')
    gmr.TextGuruMeditation.setup_autorun(version, conf=drs_conf.CONF)
    workers = (drs_conf.CONF.scheduler.workers or
               processutils.get_worker_count())
    # Forked workers must build their own executors, as in nova-scheduler.
    compat.reset_executors_before_fork()
    service.serve(server, workers=workers)
    service.wait()
