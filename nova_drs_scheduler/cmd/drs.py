"""nova-drs: plan, explain, status, history, simulate and demo.

It reads nova.conf like nova-manage.  The subcommand is known before any
Nova import, because the demo runs Nova's fixtures under eventlet (as
Nova's functional tests do) while the others use threads, and the
simulator needs no Nova at all.  ``nova_drs_scheduler.cli`` imports no
Nova module at import time, so reading its command list here is safe.
"""

import sys

from nova_drs_scheduler import cli


def main():
    argv = sys.argv[1:]
    command = next((a for a in argv if a in cli.COMMANDS), None)
    if command not in (None, 'simulate'):
        from nova_drs_scheduler import compat
        compat.monkey_patch(
            backend='eventlet' if command == 'demo' else 'threading')
    sys.exit(cli.main(argv))
