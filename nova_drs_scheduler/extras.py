"""Optional features and the setup.cfg extra that installs each one.

``pip install nova-drs-scheduler`` gives the scheduler, its filters and
weigher, the rebalancer and the CLI's live commands.  The demo, the
simulator's plot and the Prometheus metric source need more; a missing
library is reported naming the extra that brings it.
"""

import importlib


class MissingExtraError(ImportError):
    """A feature's library is not installed; the message says which extra."""


def load(extra: str, module: str, feature: str):
    """Import ``module`` for ``feature``, or raise :class:`MissingExtraError`.

    Only a missing third-party module counts: an ImportError inside this
    package is a bug and propagates as it is.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name or ''
        if not missing or missing.split('.')[0] == __name__.split('.')[0]:
            raise
        raise MissingExtraError(
            f'{feature} needs the Python module {missing!r}, which is not '
            f'installed: pip install "nova-drs-scheduler[{extra}]"',
            name=missing) from exc
