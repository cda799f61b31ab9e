"""nova-drs: plan, explain, status, history, simulate and demo.

It reads nova.conf like nova-manage.  The subcommand is known before any
Nova import, because the demo runs Nova's fixtures under eventlet (as
Nova's functional tests do) while the others use threads, and the
simulator needs no Nova at all.  ``nova_drs_scheduler.cli.main`` imports no
Nova module at import time, so reading its command list here is safe.
"""

import logging
import sys
import warnings

from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import main as cli


def _patch(command: str) -> int:
    """Nova's monkey patching, which already reads the config files."""
    from nova_drs_scheduler import compat

    # The demo runs eventlet on purpose, as Nova's functional tests do;
    # eventlet's and Nova's deprecation notices would only bury its output.
    warnings.filterwarnings('ignore', module='nova.monkey_patch')
    # Native threads on Nova 33 still let futurist import the installed
    # eventlet (Nova 34 blocks it): its notice would go to stderr at every
    # command, and an error would not be one line.
    warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
    logging.getLogger('nova.monkey_patch').setLevel(logging.ERROR)
    try:
        compat.monkey_patch(
            backend='eventlet' if command == 'demo' else 'threading')
    except UnicodeDecodeError:
        raise cli.not_text(sys.argv[1:])
    return errors.OK


def main():
    argv = sys.argv[1:]
    command = next((a for a in argv if a in cli.COMMANDS), None)
    if command not in (None, 'simulate'):
        code = errors.handle(f'nova-drs {command}', lambda: _patch(command),
                             '--debug' in argv)
        if code:
            sys.exit(code)
    sys.exit(cli.main(argv))
