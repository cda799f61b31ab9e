"""The ``nova-drs`` command: argument parsing and dispatch.

Subcommands that talk to the cloud read nova.conf (``--config-file``,
default ``/etc/nova/nova.conf``) as nova-manage does.  Output is a human
table, or JSON with ``--json``; exit codes and the handling of failures
are in :mod:`.errors`.
"""

import argparse
import logging
import sys

from nova_drs_scheduler import version
from nova_drs_scheduler.cli import errors

#: Subcommands reading nova.conf, by module; the others parse their own.
_CLOUD = ('plan', 'explain', 'status', 'history', 'recommendations',
          'apply', 'dismiss', 'maintenance', 'db')
COMMANDS = _CLOUD + ('simulate', 'demo')

DESCRIPTION = '''\
Look at and try out DRS (dynamic resource scheduling) for OpenStack Nova.

plan, explain and status run one dry-run period of the rebalancer that
nova-drs-scheduler runs, against the cloud of nova.conf: what would move
now, and why. history shows the decisions the scheduler recorded;
recommendations, apply and dismiss handle the moves it recommends in
manual mode; maintenance plans draining hosts and drains them through the
leading scheduler; db creates or upgrades the DRS database.
simulate replays a CPU trace through the same planner; demo runs a whole
Nova cloud in this process. nova-drs itself migrates nothing: apply
approves recommended moves, which the leading scheduler starts.
'''


def build_parser() -> argparse.ArgumentParser:
    # Imported here, not at the top: cmd/drs.py reads COMMANDS before
    # Nova's monkey patching, which must precede the subcommands' libraries
    # (oslo.db, Nova).
    from nova_drs_scheduler.cli import db
    from nova_drs_scheduler.cli import demo
    from nova_drs_scheduler.cli import history
    from nova_drs_scheduler.cli import inspect
    from nova_drs_scheduler.cli import maintenance
    from nova_drs_scheduler.cli import recommend
    from nova_drs_scheduler.simulate import cli as simulate_cli

    parser = errors.Parser(
        prog='nova-drs', description=DESCRIPTION, epilog=errors.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--version', action='version',
                        version=version.banner('nova-drs'),
                        help='Print our version and Nova\'s, and exit.')
    parser.add_argument('--json', action='store_true',
                        help='Machine-readable output (also accepted after '
                             'the subcommand).')
    parser.add_argument('--debug', action='store_true',
                        help='Log everything to stderr, and print the '
                             'traceback of an unexpected error.')
    parser.add_argument('--verbose', '-v', action='store_true',
                        help='Log warnings (e.g. hosts whose metrics were '
                             'ignored) to stderr.')
    subparsers = parser.add_subparsers(dest='command', metavar='COMMAND')
    subparsers.required = True
    # --json, --debug and --verbose are accepted before or after the
    # subcommand.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('--json', action='store_true',
                        default=argparse.SUPPRESS,
                        help='Machine-readable output.')
    common.add_argument('--debug', action='store_true',
                        default=argparse.SUPPRESS,
                        help='Log everything to stderr, and print the '
                             'traceback of an unexpected error.')
    common.add_argument('--verbose', '-v', action='store_true',
                        default=argparse.SUPPRESS,
                        help='Log warnings to stderr.')
    nova_conf = argparse.ArgumentParser(add_help=False)
    nova_conf.add_argument('--config-file', action='append', default=[],
                           help='nova.conf to read (repeatable; default '
                                '/etc/nova/nova.conf).')
    nova_conf.add_argument('--config-dir', action='append', default=[],
                           help='Directory of *.conf files read after the '
                                'config files (repeatable).')
    nova_conf.add_argument(
        '--db-retries', type=errors.number(int, minimum=-1), default=0,
        help='Retries, 1 second apart, when a database does not answer '
             '(default 0: fail at once; -1: forever). Replaces [database] '
             'max_retries, which is meant for services starting up.')
    for name, subparser in inspect.add_parsers(
            subparsers, [common, nova_conf]).items():
        subparser.set_defaults(command=name)
    history.add_parser(subparsers, [common, nova_conf]).set_defaults(
        command='history')
    for name, subparser in recommend.add_parsers(
            subparsers, [common, nova_conf]).items():
        subparser.set_defaults(command=name)
    maintenance.add_parser(subparsers, [common, nova_conf]).set_defaults(
        command='maintenance')
    db.add_parser(subparsers, [common, nova_conf]).set_defaults(
        command='db')
    demo.add_parser(subparsers, [common]).set_defaults(handler=demo.run)
    simulate_cli.add_parser(subparsers, [common])
    return parser


def _nova_conf(args):
    """Parse nova.conf with Nova's own defaults, as nova-manage does."""
    import nova.conf  # registers Nova's options ([database] overridden below)
    from nova import objects
    from oslo_config import cfg

    from nova_drs_scheduler import compat
    from nova_drs_scheduler import conf as drs_conf

    if not (args.config_file or args.config_dir or
            cfg.find_config_files(project='nova', prog='nova-drs')):
        raise errors.CLIError(
            'no nova.conf: /etc/nova/nova.conf does not exist; name one '
            'with --config-file', errors.CONFIG)
    argv = ['nova-drs']
    for path in args.config_file:
        argv += ['--config-file', path]
    for path in args.config_dir:
        argv += ['--config-dir', path]
    for group in ('database', 'api_database', 'drs_database'):
        nova.conf.CONF.set_override('max_retries', args.db_retries, group)
        nova.conf.CONF.set_override('retry_interval', 1, group)
    try:
        compat.parse_args(argv, prog='nova-drs')
    except UnicodeDecodeError:
        raise not_text(argv)
    objects.register_all()
    drs_conf.validate(drs_conf.CONF)
    return drs_conf.CONF


def not_text(argv: list) -> errors.CLIError:
    """The error for a config file among ``argv`` that is not UTF-8 text."""
    paths = [path for option, path in zip(argv, argv[1:], strict=False)
             if option == '--config-file']
    for path in paths:
        try:
            with open(path, encoding='utf-8') as handle:
                handle.read()
        except (OSError, UnicodeDecodeError):
            return errors.CLIError(f'{path} is not a text (UTF-8) file',
                                   errors.CONFIG)
    return errors.CLIError('a config file is not text (UTF-8)', errors.CONFIG)


def _logging(args) -> None:
    """Our one-line errors and tables only, unless asked for the log."""
    level = (logging.DEBUG if args.debug else
             logging.WARNING if args.verbose else logging.CRITICAL + 1)
    logging.basicConfig(stream=sys.stderr, level=level,
                        format='%(levelname)s %(name)s: %(message)s')
    logging.getLogger().setLevel(level)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    _logging(args)

    def run():
        conf = _nova_conf(args) if args.command in _CLOUD else None
        return args.handler(args, conf)

    return errors.handle(f'nova-drs {args.command}', run, args.debug)
