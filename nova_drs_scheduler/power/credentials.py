"""The power credentials file: one INI section per compute host.

``[drs] power_credentials_file`` names it. Each section is a compute
host's name as Nova knows it; ``[DEFAULT]`` holds values shared by every
host (e.g. one BMC user for the whole cloud). Which keys a section needs
depends on the driver (``doc/extending.md`` has both formats).

The file holds passwords, so it must be closed to other users (as ssh
insists for a private key), and no message built here ever quotes a value
or a line of it: a malformed line is reported by its number only.
"""

import collections.abc
import configparser
import os
import stat

from nova_drs_scheduler.power import base

OPTION = '[drs] power_credentials_file'


class HostCredentials(collections.abc.Mapping):
    """One host's keys and values; its repr names the keys only."""

    def __init__(self, host: str, values: dict[str, str]):
        self.host = host
        self._values = dict(values)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f'<HostCredentials {self.host}: {", ".join(sorted(self))}>'


def _problem(message: str) -> ValueError:
    return ValueError(f'Invalid value for option {OPTION}: {message}')


def _open(path: str) -> str:
    """The file's text, once its permissions allow its secrets in it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise _problem(f'{path}: {exc.strerror}.') from None
    if not stat.S_ISREG(mode):
        raise _problem(f'{path} is not a regular file.')
    if mode & (stat.S_IRWXO | stat.S_IWGRP):
        raise _problem(
            f'{path} is open to other users (mode {stat.S_IMODE(mode):04o}) '
            'and it holds passwords: make it 0600, or 0640 with the '
            'scheduler\'s group (chmod o-rwx,g-w).')
    try:
        with open(path, encoding='utf-8') as handle:
            return handle.read()
    except OSError as exc:
        raise _problem(f'{path} cannot be read: {exc.strerror}.') from None
    except UnicodeDecodeError:
        raise _problem(f'{path} is not UTF-8 text.') from None


def _parse(path: str, text: str) -> configparser.ConfigParser:
    # No interpolation: a password may hold a '%'.
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=path)
    except configparser.MissingSectionHeaderError as exc:  # a ParsingError
        raise _problem(f'{path}: line {exc.lineno} comes before any [host] '
                       'section.') from None
    except configparser.ParsingError as exc:
        # Its message quotes the lines, which may hold a password.
        lines = ', '.join(str(number) for number, _line in exc.errors)
        raise _problem(f'{path}: malformed line {lines}; each line is '
                       '"key = value" under a [host] section.') from None
    except configparser.DuplicateSectionError as exc:
        raise _problem(f'{path}: section [{exc.section}] appears twice (line '
                       f'{exc.lineno}).') from None
    except configparser.DuplicateOptionError as exc:
        raise _problem(f'{path}: key {exc.option!r} appears twice in '
                       f'[{exc.section}] (line {exc.lineno}).') from None
    except configparser.Error as exc:
        raise _problem(f'{path}: {type(exc).__name__}.') from None
    return parser


def read(conf, driver: str, required: frozenset[str],
         allowed: frozenset[str]) -> dict[str, HostCredentials]:
    """``{host: credentials}`` from the file, or ValueError naming the
    option, the file and the host or line at fault.

    ``required`` keys must be set for every host (in its section or in
    ``[DEFAULT]``); a key outside ``allowed`` is refused, so that a typo
    such as ``passwd`` is not silently ignored.
    """
    path = conf.drs.power_credentials_file
    if not path:
        raise _problem(f'required when [drs] power_driver = {driver}.')
    parser = _parse(path, _open(path))
    hosts = {}
    for host in parser.sections():
        values = dict(parser.items(host))
        unknown = sorted(set(values) - allowed)
        if unknown:
            raise _problem(
                f'{path}: [{host}] has unknown key {unknown[0]!r} for the '
                f'{driver} driver (known: {", ".join(sorted(allowed))}).')
        missing = sorted(key for key in required if not values.get(key))
        if missing:
            raise _problem(f'{path}: [{host}] needs {missing[0]!r}.')
        hosts[host] = HostCredentials(host, values)
    if not hosts:
        raise _problem(f'{path} has no [host] section.')
    return hosts


def of(conf, hosts: dict[str, HostCredentials], host: str,
       verb: str) -> HostCredentials:
    """``host``'s credentials, or the PowerError saying the file has none."""
    found = hosts.get(host)
    if found is None:
        raise base.PowerError(
            host, f'{verb} failed: the credentials file '
                  f'{conf.drs.power_credentials_file} has no [{host}] '
                  'section.')
    return found


def scrub(text: str, found: HostCredentials) -> str:
    """``text`` (a library's error) without the host's user or password."""
    for key in ('password', 'username'):
        if found.get(key):
            text = text.replace(found[key], '***')
    return text
