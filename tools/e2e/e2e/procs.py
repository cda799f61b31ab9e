"""Child processes of the run: started in their own process groups,
logged to files, and always stopped by the PIDs we started.

Every process is a session leader (``start_new_session``), so stopping
its group also stops what it forked (gunicorn workers, beam's helpers)
and nothing else on the machine.
"""

import atexit
import os
import signal
import subprocess
import time


class Supervisor:

    def __init__(self, log_dir: str):
        self.log_dir = log_dir
        self.procs = {}
        atexit.register(self.stop_all)

    def start(self, name: str, argv: list, env: dict | None = None,
              cwd: str | None = None) -> subprocess.Popen:
        log = open(os.path.join(self.log_dir, f'{name}.log'), 'ab')
        full_env = dict(os.environ, **(env or {}))
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                env=full_env, cwd=cwd or self.log_dir,
                                start_new_session=True)
        log.close()
        self.procs[name] = proc
        return proc

    def kill(self, name: str, sig=signal.SIGKILL) -> None:
        """Signal the whole process group of ``name`` and reap it."""
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        _signal_group(proc.pid, sig)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
        # Whatever the leader left behind in its group goes too.
        _signal_group(proc.pid, signal.SIGKILL)

    def stop(self, name: str, grace: float = 10.0) -> None:
        proc = self.procs.get(name)
        if proc is None:
            return
        _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        self.kill(name)

    def stop_all(self, grace: float = 10.0) -> None:
        """SIGTERM every group at once, SIGKILL what is left after
        ``grace`` seconds."""
        for proc in self.procs.values():
            _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(
                proc.poll() is None for proc in self.procs.values()):
            time.sleep(0.2)
        for name in list(self.procs):
            self.kill(name)


def _signal_group(pgid: int, sig) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
