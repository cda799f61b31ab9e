"""nova-drs-scheduler: a drop-in replacement for the nova-scheduler binary.

It runs the scheduler manager named by ``[scheduler] driver`` with the
host manager named by ``[scheduler] host_manager``.  The service keeps the
binary name ``nova-scheduler``: Nova looks scheduler services up by that
name, and service binaries must start with ``nova-``.
"""

import sys


def main():
    if '--version' in sys.argv[1:]:
        # Ours and Nova's; oslo.config's own --version would print Nova's.
        from nova_drs_scheduler import version
        print(version.banner('nova-drs-scheduler'))
        return
    # As nova-scheduler does: patch before anything imports eventlet or
    # oslo.service, hence the imports inside the function.
    from nova_drs_scheduler import compat
    compat.monkey_patch(backend='threading')

    from nova_drs_scheduler import service
    service.main(sys.argv)
