"""A cell database with real compute rows, and a CachingHostManager on it."""

import contextlib

import fixtures
import sqlalchemy
from nova import context as nova_context
from nova import objects
from nova import test
from nova.db.main import api as main_db_api
from nova.db.main import models
from oslo_utils import uuidutils

from nova_drs_scheduler.host_manager import CachingHostManager

_TRANSACTION_CONTROL = {'BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE'}
#: How ``rows.service_flags`` starts, as SQLAlchemy renders it.
_FLAGS_READ = 'SELECT services.host, services.disabled, '


class SQLCounter:
    """Counts the SQL statements any engine executes while active."""

    def __init__(self):
        self.statements = []

    def _record(self, conn, cursor, statement, *args):
        self.statements.append(statement)

    @property
    def queries(self):
        """Statements other than transaction control."""
        return [s for s in self.statements
                if s.split()[0].upper() not in _TRANSACTION_CONTROL]

    @property
    def flag_reads(self):
        """The per-request reads of disabled and forced-down services."""
        return [s for s in self.queries if s.startswith(_FLAGS_READ)]

    @property
    def row_reads(self):
        """The other queries: reads of the cached rows, and any other."""
        return [s for s in self.queries if not s.startswith(_FLAGS_READ)]

    @contextlib.contextmanager
    def __call__(self):
        self.statements = []
        sqlalchemy.event.listen(sqlalchemy.engine.Engine,
                                'before_cursor_execute', self._record)
        try:
            yield self
        finally:
            sqlalchemy.event.remove(sqlalchemy.engine.Engine,
                                    'before_cursor_execute', self._record)


class HostCacheTestCase(test.TestCase):
    """Creates computes in cell DBs; ``self.now`` is the cache's clock."""

    MAX_STALENESS = 5

    def setUp(self):
        super().setUp()
        # Stock starts a thread reading every instance at start-up; it is
        # not what these tests look at and would race the SQL counter.
        self.useFixture(fixtures.MockPatch(
            'nova.scheduler.host_manager.HostManager._init_instance_info'))
        self.flags(max_staleness=self.MAX_STALENESS, group='drs_host_cache')
        self.ctxt = nova_context.get_admin_context()
        self.cell = self.cell_mappings['cell1']
        # Near 0: an elapsed time is then far from the clock modulo the
        # time it is counted from (equal while under it).
        self.now = 1.0
        self.manager = self.make_manager()
        self.count_sql = SQLCounter()

    def make_manager(self):
        manager = CachingHostManager()
        # A new float at each call, as time.monotonic() returns.
        manager.rows.clock = lambda: self.now + 0.0
        # Unfreezes what refresher passes froze.
        self.addCleanup(manager.stop_refresher)
        return manager

    def advance(self, seconds=None):
        """Let ``seconds`` (default: just past the bound) elapse."""
        self.now += self.MAX_STALENESS + 0.1 if seconds is None else seconds

    @contextlib.contextmanager
    def cell_context(self, cell=None):
        with nova_context.target_cell(self.ctxt, cell or self.cell) as cctxt:
            yield cctxt

    def add_compute(self, host, cell=None, **fields):
        """A nova-compute service, its compute node and host mapping."""
        cell = cell or self.cell
        with self.cell_context(cell) as cctxt:
            service = objects.Service(cctxt, host=host, binary='nova-compute',
                                      topic='compute', report_count=1)
            service.create()
            values = dict(
                uuid=uuidutils.generate_uuid(), host=host,
                hypervisor_hostname=host, service_id=service.id,
                vcpus=16, vcpus_used=0, memory_mb=32768, memory_mb_used=0,
                free_ram_mb=32768, local_gb=1000, local_gb_used=0,
                free_disk_gb=1000, disk_available_least=1000,
                hypervisor_type='fake', hypervisor_version=1,
                current_workload=0, running_vms=0, cpu_info='{}',
                host_ip='192.0.2.1', supported_hv_specs=[], stats={},
                cpu_allocation_ratio=4.0, ram_allocation_ratio=1.0,
                disk_allocation_ratio=1.0)
            values.update(fields)
            compute = objects.ComputeNode(cctxt, **values)
            compute.create()
        objects.HostMapping(self.ctxt, host=host, cell_mapping=cell).create()
        return compute

    def stamp_compute(self, compute, **values):
        """Write columns, timestamps included, behind the objects' back."""
        with self.cell_context() as cctxt:
            _update_row(cctxt, models.ComputeNode, compute.id, values)

    def stamp_service(self, service, **values):
        """The same for a service row, deleted or not."""
        with self.cell_context() as cctxt:
            _update_row(cctxt, models.Service, service.id, values)

    def add_instance(self, host, cell=None):
        with self.cell_context(cell) as cctxt:
            instance = objects.Instance(
                cctxt, uuid=uuidutils.generate_uuid(), host=host,
                project_id='p', user_id='u')
            instance.create()
        return instance

    def states(self, compute_uuids=None, spec=None):
        """{host: HostState} of one request."""
        result = self.manager.get_host_states_by_uuids(
            self.ctxt, compute_uuids, spec or objects.RequestSpec())
        return {state.host: state for state in result}


@main_db_api.pick_context_manager_writer
def _update_row(context, model, row_id, values):
    context.session.query(model).filter_by(id=row_id).update(
        values, synchronize_session=False)
