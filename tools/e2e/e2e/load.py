"""The test's CPU load model, written into each compute's load file.

A host's CPU is ``BASE`` plus the load of each server Nova says is on it,
so when the rebalancer moves a server its load moves with it, as on a
real hypervisor.  The test sets per-server loads (``heat``); a thread
rewrites the files every second from ``GET /servers/detail``.
"""

import threading

BASE = 5.0
IDLE = 5.0


class LoadModel(threading.Thread):

    def __init__(self, nova, deployment, report):
        super().__init__(daemon=True)
        self.nova = nova
        self.deployment = deployment
        self.report = report
        self.vm_load = {}
        self.host_load = {}
        self._stop_event = threading.Event()
        self._error = None

    def heat(self, uuids, percent: float) -> None:
        for uuid in uuids:
            self.vm_load[uuid] = percent

    def cool_all(self) -> None:
        self.vm_load.clear()

    def loads(self, servers) -> dict:
        loads = {host: BASE for host in self.deployment.compute_state}
        for server in servers:
            host = server.get('OS-EXT-SRV-ATTR:host')
            if host in loads:
                loads[host] += self.vm_load.get(server['id'], IDLE)
        return {host: min(load, 100.0) for host, load in loads.items()}

    def run(self) -> None:
        while not self._stop_event.wait(1.0):
            try:
                self.host_load = self.loads(self.nova.servers())
            except Exception as exc:  # API briefly unreachable: keep going
                if str(exc) != self._error:
                    self._error = str(exc)
                    self.report.info(f'load model: {exc}')
                continue
            for host, load in self.host_load.items():
                self.deployment.set_cpu(host, round(load, 1))

    def stop(self) -> None:
        self._stop_event.set()
