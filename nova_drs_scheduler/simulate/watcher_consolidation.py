"""OpenStack Watcher's ``vm_workload_consolidation``, as a continuous audit.

python-watcher 17.0.0's ``VMWorkloadConsolidation`` class runs unchanged on
the same compute model and datasource as the balancing strategies
(``watcher_adapter``), once every ``audit_interval`` seconds, as a
continuous audit with its action plans applied automatically: Watcher skips
an audit while the action plan of the last one is still running.

Its solution, as Watcher's applier runs it (``weight`` planner): the
compute-service changes first, then the migrations in layers of two
(``watcher_applier.Applier``, to the destinations the strategy chose).

- *Disable* (the hosts its plan empties): the host is taken out of service
  and, once empty, counts as powered off (``power.Hosts.standby``).
  Watcher itself only disables the service; the benchmark credits it with
  the power off.
- *Enable* (a disabled host its offload phase needs as a destination):
  a host still being emptied is given back at once; a host already off is
  powered on and serves ``boot_seconds`` later (``power.Hosts.wake``).
  Watcher does not know it was off: it plans migrations to it in the same
  audit, which Nova refuses while its ``nova-compute`` is down.

A host off stays in Watcher's model as Watcher left it, up and disabled
(so its offload phase may enable it again); a booting host is down, out of
its scope until it reports up.

An audit that fails inside Watcher (its solution's efficacy indicators
refused by their schema: ``released_compute_nodes_count`` goes negative
when one audit enables the same disabled host once per migration to it)
applies nothing, as in Watcher, which marks the audit FAILED.  That ends
a real continuous audit; here the next one runs at its time, as if the
operator had started the audit again, and the failures are counted.
"""

import time

from nova_drs_scheduler.planning import model
from nova_drs_scheduler.simulate import watcher_adapter
from nova_drs_scheduler.simulate import watcher_applier

NAME = f'watcher_{watcher_adapter.CONSOLIDATION}'
#: Seconds between two audits by default: the 5-minute interval of
#: Beloglazov's algorithm (which this strategy implements) on PlanetLab.
AUDIT_INTERVAL = 300.0


class Consolidation:
    """``vm_workload_consolidation`` audits, their plans run over time."""

    def __init__(self, parameters: dict | None = None,
                 audit_interval: float = AUDIT_INTERVAL, label: str = ''):
        if audit_interval <= 0:
            raise ValueError('the audit interval must be positive')
        self._class = watcher_adapter.StrategyClass(
            watcher_adapter.CONSOLIDATION, parameters or {})
        self.parameters = self._class.parameters
        self.audit_interval = audit_interval
        self._model = watcher_adapter.ComputeModel()
        self._applier = watcher_applier.Applier()
        self._next = 0.0
        #: Audits run, skipped while an action plan was running, and
        #: failed inside Watcher (with the first failure's message).
        self.audits = 0
        self.skipped = 0
        self.failed = 0
        self.failure = None
        self.name = label or NAME

    def plan(self, view) -> tuple:
        """Audit when one is due and no action plan runs, then start the
        migrations due in this period; ``([], input, decision)``."""
        built = decided = 0.0
        if view.now >= self._next:
            while self._next <= view.now:
                self._next += self.audit_interval
            if self._applier.busy(view.now):
                self.skipped += 1
            else:
                built, decided = self._audit(view)
        self._applier.run(view)
        return [], built, decided

    def react(self, view) -> tuple:
        """Between periods: the applier's layers."""
        self._applier.run(view)
        return [], 0.0, 0.0

    def _audit(self, view) -> tuple:
        """One audit: its service changes applied, its migrations queued;
        its input and decision seconds."""
        if view.power is None:
            raise ValueError(f'{self.name} needs a run with a power model')
        strategy = self._class.new()
        started = time.process_time()
        datasource = watcher_adapter.Datasource(view)
        waking = frozenset(h for h, s in view.power.state.items()
                           if s == model.WAKING)
        self._class.ready(strategy, self._model.sync(view.cluster, waking),
                          datasource)
        built = time.process_time()
        self.audits += 1
        try:
            solution = strategy.execute()
        except Exception as exc:  # Watcher's audit fails on any error.
            self.failed += 1
            first = (str(exc).splitlines() or [''])[0]
            self.failure = self.failure or f'{type(exc).__name__}: {first}'
            solution = None
        decided = time.process_time()
        migrations = []
        for action in solution.actions if solution else ():
            parameters = action['input_parameters']
            if action['action_type'] == 'migrate':
                migrations.append((parameters['resource_id'],
                                   parameters['source_node'],
                                   parameters['destination_node']))
            elif action['action_type'] == 'change_nova_service_state':
                self._service(view, parameters['resource_id'],
                              parameters['state'])
        self._applier.add(migrations, view.now)
        return (built - started + datasource.seconds,
                decided - built - datasource.seconds)

    @staticmethod
    def _service(view, host: str, state: str) -> None:
        """A compute service disabled or enabled, in power terms."""
        power, now = view.power, view.now
        if state == 'disabled':
            power.standby(host, now)
        elif not power.cancel(host, now):
            power.wake(host, now)
