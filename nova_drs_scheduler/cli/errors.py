"""Exit codes of ``nova-drs`` and the one place that turns failures into them.

A subcommand raises :class:`CLIError` for what it detects itself; the
exceptions of the libraries underneath (oslo.config, oslo.db,
keystoneauth, our metric sources and placement) are classified by
:func:`classify`.  :func:`handle` prints one line, ``nova-drs COMMAND:
message``, and returns the code.  Anything else is a bug: code
:data:`UNEXPECTED`, one line, and the traceback only with ``--debug``.
A new subcommand plugs in by raising :class:`CLIError` with one of these
codes (doc/cli.md lists them; a unit test keeps that table in step).
"""

import argparse
import sys
import traceback

OK = 0
#: ``plan``: moves would be made; ``explain``: the host is violated or the
#: instance would move.  Lets scripts act on the answer, like diff(1).
ACTION = 1
USAGE = 2
CONFIG = 3
CLOUD = 4
DB_SCHEMA = 5
#: ``maintenance enter --wait``: a drain is blocked, or not done in time;
#: ``maintenance plan``: not every host can drain at once.
BLOCKED = 6
TIMED_OUT = 7
#: sysexits.h's EX_SOFTWARE: an error nobody anticipated, i.e. a bug.
UNEXPECTED = 70

#: (code, meaning) as ``--help`` and doc/cli.md show them.
CODES = (
    (OK, 'success (plan: nothing would move)'),
    (ACTION, 'plan: moves would be made; explain: the host is violated '
             'or the instance would move'),
    (USAGE, 'usage error: bad arguments, unknown host or instance, bad '
            'trace file, unwritable output directory'),
    (CONFIG, 'configuration error: nova.conf missing, unreadable or '
             'invalid (the message names the file or option), no '
             '[placement] credentials, or an optional extra not installed '
             '(the message names it)'),
    (CLOUD, 'the cloud could not be reached or failed: database, '
            'Keystone, placement, metric source; maintenance exit: Nova '
            'refused to start the drain of the first queued host (the exit '
            'stands)'),
    (DB_SCHEMA, 'a database was reached but its schema is missing or too '
                'old (run nova-manage db sync, or nova-drs db sync for the '
                'DRS database)'),
    (BLOCKED, 'maintenance enter --wait: a drain is blocked (the '
              'instances that cannot leave are listed, with why); '
              'maintenance plan: not every host can drain at once (an '
              'instance would block, or a host would go over a threshold)'),
    (TIMED_OUT, 'maintenance enter --wait: not drained within --timeout '
                '(the drain goes on)'),
    (UNEXPECTED, 'unexpected error (a bug; --debug shows the traceback)'),
)

EPILOG = 'exit codes:\n' + ''.join(f'  {code:<3} {meaning}\n'
                                   for code, meaning in CODES)


class CLIError(Exception):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


class Parser(argparse.ArgumentParser):
    """Usage errors in one line (exit 2), not the whole usage text."""

    def error(self, message):
        self.exit(USAGE, f'{self.prog}: error: {message} '
                         f'(see {self.prog} --help)\n')


def number(kind, minimum=None, maximum=None, above=None):
    """An argparse ``type``: ``kind`` within bounds, else a usage error."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            what = 'an integer' if kind is int else 'a number'
            raise argparse.ArgumentTypeError(f'{text!r} is not {what}')
        if value != value or (above is not None and value <= above):
            raise argparse.ArgumentTypeError(
                f'{text} must be greater than {above}')
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(
                f'{text} must be at least {minimum}')
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(
                f'{text} must be at most {maximum}')
        return value
    parse.__name__ = kind.__name__
    return parse


def classify(exc: BaseException) -> CLIError | None:
    """The code and line for a known library failure; None for a bug.

    A library that was never imported cannot have raised, so each one is
    looked up in ``sys.modules`` instead of imported: the simulator runs
    where Nova, oslo.db and keystoneauth are not even installed.
    """
    cfg = _loaded('oslo_config.cfg')
    ks_exc = _loaded('keystoneauth1.exceptions')
    db_exc = _loaded('oslo_db.exception')
    drs_conf = _loaded('nova_drs_scheduler.conf')
    candidates = _loaded('nova_drs_scheduler.rebalance.candidates')
    sources_base = _loaded('nova_drs_scheduler.rebalance.sources.base')
    extras = _loaded('nova_drs_scheduler.extras')
    drs_migration = _loaded('nova_drs_scheduler.db.migration')

    if isinstance(exc, (cfg.Error, drs_conf.ConfigError,
                        extras.MissingExtraError)):
        return CLIError(str(exc), CONFIG)
    if isinstance(exc, ks_exc.MissingAuthPlugin):
        return CLIError('no credentials for placement: set [placement] '
                        'auth_type and its options in nova.conf', CONFIG)
    if isinstance(exc, ks_exc.Unauthorized):
        return CLIError('Keystone refused the [placement] credentials of '
                        f'nova.conf: {exc}', CONFIG)
    if isinstance(exc, ks_exc.ClientException):
        # Connection refused, timeouts, discovery, no endpoint, 5xx.
        return CLIError(f'cannot reach Keystone or placement: {exc}', CLOUD)
    if isinstance(exc, drs_migration.NotMigratedError):
        return CLIError(str(exc), DB_SCHEMA)
    if isinstance(exc, db_exc.CantStartEngineError):
        return CLIError(f'no database configured: {exc} (set [database] '
                        'and [api_database] connection)', CONFIG)
    if isinstance(exc, db_exc.DBConnectionError):
        return CLIError(f'cannot reach the database: {_first_line(exc)}',
                        CLOUD)
    if isinstance(exc, db_exc.DBError):
        if _missing_table(exc):
            return CLIError('the database has no Nova schema, or an old '
                            f'one: {_first_line(exc)} (run nova-manage '
                            'api_db sync and db sync)', DB_SCHEMA)
        return CLIError(f'database error: {_first_line(exc)}', CLOUD)
    if isinstance(exc, sources_base.MetricsUnavailable):
        return CLIError(f'no metrics: {exc}', CLOUD)
    if isinstance(exc, candidates.PlacementUnavailableError):
        return CLIError(str(exc), CLOUD)
    return None


def _loaded(name: str):
    """The module if imported, else a stand-in whose classes match nothing."""
    return sys.modules.get(name) or _Nothing()


class _Nothing:
    def __getattr__(self, name):
        return _NeverRaisedError


class _NeverRaisedError(Exception):
    """Raised by nothing."""


def _first_line(exc) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else \
        type(exc).__name__


def _missing_table(exc) -> bool:
    """A query on a table that does not exist (MySQL, SQLite, PostgreSQL)."""
    orig = getattr(getattr(exc, 'inner_exception', None), 'orig', None)
    args = getattr(orig, 'args', ())
    return (bool(args) and args[0] == 1146 or
            getattr(orig, 'pgcode', None) == '42P01' or
            'no such table' in str(exc))


def handle(prog: str, run, debug: bool = False) -> int:
    """``run()``'s exit code, or one line on stderr and a failure code."""
    try:
        return run()
    except KeyboardInterrupt:
        print(f'{prog}: interrupted', file=sys.stderr)
        return 130
    except Exception as exc:
        error = exc if isinstance(exc, CLIError) else classify(exc)
        if error is None:
            error = CLIError(f'unexpected error: {type(exc).__name__}: '
                             f'{_first_line(exc)}'
                             + ('' if debug else ' (--debug shows the '
                                'traceback)'), UNEXPECTED)
        if debug:
            traceback.print_exc()
        print(f'{prog}: {error}', file=sys.stderr)
        return error.code
