"""A BMC speaking IPMI over LAN on 127.0.0.1, for the ``ipmi`` driver's
tests: pyghmi's own BMC server, keeping a chassis power state.

Run as a program (by :class:`BmcFixture`): it binds a free UDP port,
prints it, writes the chassis state to the file given on its command line
at start and after every change, and serves until killed. A process of its
own keeps pyghmi's server globals out of the test process, and works the
same whether the tests run under eventlet or not.

pyghmi's server needs two things a real BMC does, written here:
- it answers an open-session request proposing anything but HMAC-SHA1
  with status 0x11 (no matching cipher suite), so that pyghmi's client,
  which proposes SHA-256 first, falls back to the suite 3 it serves;
- it refuses an unknown user name with status 0x0d in RAKP2 rather than
  staying silent.
"""

import argparse
import os
import subprocess
import sys

import fixtures

HMAC_SHA1 = 1
NO_CIPHER_SUITE_MATCH = 0x11
UNAUTHORIZED_NAME = 0x0d


def _serve(user: str, password: str, state_file: str) -> None:
    from pyghmi.ipmi import bmc
    from pyghmi.ipmi.private import constants
    from pyghmi.ipmi.private import serversession

    class Session(serversession.ServerSession):

        def create_open_session_response(self, request):
            # Byte 12: the authentication algorithm the client proposes.
            if request[12] != HMAC_SHA1:
                self.clientsessionid = request[4:8]
                return bytearray([request[0], NO_CIPHER_SUITE_MATCH, 0, 0]
                                 ) + request[4:8]
            return super().create_open_session_response(request)

        def _got_rakp1(self, data):
            name = bytes(data[28:28 + data[27]]).decode('utf-8', 'replace')
            if data[27] and self.authdata.get(name) is None:
                self.send_payload(
                    bytearray([data[0], UNAUTHORIZED_NAME, 0, 0]) +
                    self.clientsessionid,
                    constants.payload_types['rakp2'], retry=False)
                return
            super()._got_rakp1(data)

    class ChassisBmc(bmc.Bmc):

        def __init__(self):
            super().__init__({user: password}, port=0, address='127.0.0.1')
            # pyghmi routes a session's packets by the port it was given.
            self.port = self.serversocket.getsockname()[1]
            self.power = 'on'
            self._record()

        def _record(self):
            with open(state_file + '.new', 'w') as handle:
                handle.write(self.power)
            os.replace(state_file + '.new', state_file)

        def sessionless_data(self, data, sockaddr):
            data = bytearray(data)
            if (len(data) >= 22 and data[0] == 6 and data[2:4] == b'\xff\x07'
                    and data[4] == 6 and data[5] == 16):
                # An RMCP+ open-session request: a session of ours.
                Session(self.authdata, self.kg, sockaddr, self.serversocket,
                        data[16:], self.uuid, bmc=self)
                return
            super().sessionless_data(data, sockaddr)

        def get_power_state(self):
            return self.power

        def power_on(self):
            self.power = 'on'
            self._record()

        def power_off(self):
            self.power = 'off'
            self._record()

        def power_shutdown(self):
            self.power_off()

    server = ChassisBmc()
    print(server.port, flush=True)
    server.listen()


class BmcFixture(fixtures.Fixture):
    """A BMC process on 127.0.0.1; ``port`` and :meth:`power` read it."""

    def __init__(self, user: str = 'admin', password: str = 'secret'):
        super().__init__()
        self.user = user
        self.password = password

    def _setUp(self):
        folder = self.useFixture(fixtures.TempDir()).path
        self.state_file = os.path.join(folder, 'power')
        self.process = subprocess.Popen(
            [sys.executable, __file__, self.user, self.password,
             self.state_file],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        self.addCleanup(self._stop)
        self.port = int(self.process.stdout.readline())

    def _stop(self):
        self.process.kill()
        self.process.wait()
        self.process.stdout.close()

    def power(self) -> str:
        with open(self.state_file) as handle:
            return handle.read()


class SilentPortFixture(fixtures.Fixture):
    """A UDP port on 127.0.0.1 that receives and never answers."""

    def _setUp(self):
        import socket
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(self.socket.close)
        self.socket.bind(('127.0.0.1', 0))
        self.port = self.socket.getsockname()[1]


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('user')
    parser.add_argument('password')
    parser.add_argument('state_file')
    args = parser.parse_args()
    _serve(args.user, args.password, args.state_file)
