"""The ``nova-drs`` command line: argument parsing and dispatch.

Subcommands that talk to the cloud read nova.conf (``--config-file``,
default ``/etc/nova/nova.conf``) as nova-manage does.  Output is a human
table, or JSON with ``--json``; exit codes are in :mod:`.errors`.
"""

import argparse
import sys

from nova_drs_scheduler.cli import db
from nova_drs_scheduler.cli import demo
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import history
from nova_drs_scheduler.cli import recommend

#: Subcommands reading nova.conf, by module; the others parse their own.
_CLOUD = ('plan', 'explain', 'status', 'history', 'recommendations',
          'apply', 'dismiss', 'db')
COMMANDS = _CLOUD + ('simulate', 'demo')


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='nova-drs', description=__doc__, epilog=errors.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--json', action='store_true',
                        help='Machine-readable output.')
    subparsers = parser.add_subparsers(dest='command', metavar='COMMAND')
    subparsers.required = True
    # --json is accepted before or after the subcommand.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('--json', action='store_true',
                        default=argparse.SUPPRESS,
                        help='Machine-readable output.')
    nova_conf = argparse.ArgumentParser(add_help=False)
    nova_conf.add_argument('--config-file', action='append', default=[],
                           help='nova.conf to read (repeatable; default '
                                '/etc/nova/nova.conf).')
    nova_conf.add_argument('--config-dir', action='append', default=[])
    from nova_drs_scheduler.cli import inspect
    for name, subparser in inspect.add_parsers(
            subparsers, [common, nova_conf]).items():
        subparser.set_defaults(command=name)
    history.add_parser(subparsers, [common, nova_conf]).set_defaults(
        command='history')
    for name, subparser in recommend.add_parsers(
            subparsers, [common, nova_conf]).items():
        subparser.set_defaults(command=name)
    db.add_parser(subparsers, [common, nova_conf]).set_defaults(
        command='db')
    demo.add_parser(subparsers, [common]).set_defaults(handler=demo.run)
    from nova_drs_scheduler.simulate import cli as simulate_cli
    simulate_cli.add_parser(subparsers)
    return parser


def _nova_conf(args):
    """Parse nova.conf with Nova's own defaults, as nova-manage does."""
    from nova import config
    from nova import objects

    from nova_drs_scheduler import conf as drs_conf

    argv = ['nova-drs']
    for path in args.config_file:
        argv += ['--config-file', path]
    for path in args.config_dir:
        argv += ['--config-dir', path]
    try:
        config.parse_args(argv)
        objects.register_all()
        drs_conf.validate(drs_conf.CONF)
    except (drs_conf.ConfigError, ValueError) as exc:
        raise errors.CLIError(str(exc), errors.CONFIG)
    return drs_conf.CONF


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == 'simulate':
            return args.func(args)
        conf = _nova_conf(args) if args.command in _CLOUD else None
        return args.handler(args, conf)
    except errors.CLIError as exc:
        print(f'nova-drs {args.command}: {exc}', file=sys.stderr)
        return exc.code
