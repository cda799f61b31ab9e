"""Exit codes of ``nova-drs``, documented in ``nova-drs --help``."""

OK = 0
#: ``plan``: moves would be made; ``explain``: the host is violated or the
#: instance would move.  Lets scripts act on the answer, like diff(1).
ACTION = 1
USAGE = 2
CONFIG = 3
CLOUD = 4

EPILOG = '''exit codes:
  0  success (plan: nothing would move)
  1  plan: moves would be made; explain: host violated / instance chosen
  2  usage error
  3  configuration error (the message names the option)
  4  the cloud (database, placement) could not be reached
'''


class CLIError(Exception):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code
