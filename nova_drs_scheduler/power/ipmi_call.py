"""One IPMI request, in a process of its own (the ``ipmi`` driver's).

The request comes as JSON on standard input (so no secret is ever on a
command line) and the answer goes as JSON to standard output. pyghmi keeps
its sessions, sockets and I/O thread in module globals and, against a BMC
that opens sessions but never completes a login, retries for ever; a
process that the driver kills at ``[drs] power_timeout`` is the one way to
bound every call and to leave nothing behind in the scheduler.
"""

import contextlib
import json
import os
import sys

#: Login failures that mean "wrong user, password or privilege" (pyghmi's
#: texts: its own HMAC check, and the BMC's RAKP status codes).
_REFUSALS = ('Incorrect password', 'Unauthorized name', 'Unauthorized role',
             'Invalid role', 'Invalid username length', 'Unauthorized GUID')


def classify(exc: Exception) -> dict:
    """The answer for a failure: a kind the driver words, and pyghmi's
    text."""
    text = str(exc.args[0]) if exc.args and exc.args[0] else ''
    if not text or text == 'Session no longer connected':
        # pyghmi's own give-up after its retries: IpmiException(None).
        kind = 'silent'
    elif any(refusal in text for refusal in _REFUSALS):
        kind = 'refused'
    elif 'Unable to transmit' in text or isinstance(exc, OSError):
        kind = 'address'
    else:
        kind = 'error'
    return {'error': kind, 'detail': text}


def run(request: dict) -> dict:
    """Carry out ``request['action']``: ``on``, ``off`` or ``state``."""
    from pyghmi import exceptions
    from pyghmi.ipmi import command

    try:
        ipmi = command.Command(request['address'], request['username'],
                               request['password'], port=request['port'])
    except (exceptions.PyghmiException, OSError) as exc:
        return classify(exc)
    try:
        action = request['action']
        state = ipmi.get_power()['powerstate']
        if action == 'on':
            if state != 'on':
                # ``wait``: polls about once a second until the chassis
                # reports on.
                state = ipmi.set_power('on', wait=request['wait'])[
                    'powerstate']
        elif action == 'off':
            if state != 'off':
                # ACPI soft-off: the host's OS shuts down in order.
                ipmi.set_power('shutdown')
        return {'state': state}
    except (exceptions.PyghmiException, OSError) as exc:
        return classify(exc)
    finally:
        # Frees the BMC's session slot (BMCs hold only a few); the answer
        # is decided already, whatever the logout meets.
        with contextlib.suppress(Exception):
            ipmi.ipmi_session.logout()


def main() -> None:
    answer = os.fdopen(os.dup(1), 'w')
    os.dup2(2, 1)  # pyghmi prints; only the answer goes to standard output
    answer.write(json.dumps(run(json.load(sys.stdin))))
    answer.close()


if __name__ == '__main__':
    main()
