"""Our version (pbr, from the git tag the package was built at) and Nova's."""

from importlib import metadata


def _installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return 'not installed'


def version_string() -> str:
    return _installed('nova-drs-scheduler')


def banner(prog: str) -> str:
    """``PROG VERSION (nova VERSION)``, for ``--version``."""
    return f'{prog} {version_string()} (nova {_installed("nova")})'
