"""Placement with one provider per compute node, in or out of process.

``--placement inprocess`` runs it inside the benchmark (Nova's functional
fixture, wsgi-intercept); ``process`` in a process of its own over HTTP
(tools/bench_placement.py), as deployed.  The report client reaches it
through Nova's fixture and keystoneauth either way.
"""

import contextlib

import os_traits
import sqlalchemy as sa
from bench_placement import served as served_placement
from nova.tests.functional import fixtures as func_fixtures
from placement import db_api as placement_db
from placement.db.sqlalchemy import models as placement_models

#: ``--placement``: where placement runs.
INPROCESS = 'inprocess'
PLACEMENT = (INPROCESS, 'process')


@contextlib.contextmanager
def placement_service(where, nodes):
    """Placement (``where``: :data:`PLACEMENT`) with one provider per
    node, answering the report client's calls; yields a client of its API
    (``get``, ``put``, ``post``, ``delete``).

    Either way the report client's calls go through Nova's functional
    fixture and keystoneauth: only where placement runs differs.
    """
    if where == INPROCESS:
        with func_fixtures.PlacementFixture() as fixture:
            populate_placement(fixture.api,
                               placement_db.get_placement_engine(), nodes)
            yield fixture.api
    else:
        with served_placement() as server, ServedPlacementFixture(
                server) as fixture:
            engine = sa.create_engine(server.db_url)
            try:
                populate_placement(fixture.api, engine, nodes)
            finally:
                engine.dispose()
            yield fixture.api


class ServedPlacementFixture(func_fixtures.PlacementFixture):
    """Nova's placement fixture sending the report client's calls to
    placement served in another process (:func:`bench_placement.served`)
    instead of one it runs inside this one."""

    def __init__(self, server):
        super().__init__(db=False, use_intercept=False)
        self.endpoint = server.url
        self.db_url = server.db_url

    def _configure_placement(self, conf_fixture):
        super()._configure_placement(conf_fixture)
        conf_fixture.config(connection=self.db_url,
                            group='placement_database')


def populate_placement(placement, engine, nodes):
    """One provider per node: the first through placement's API, the
    others copied from it in bulk into its database (``engine``; thousands
    of API calls take too long on a loaded machine, and set the same
    rows)."""
    inventories = {
        'VCPU': {'total': 64, 'allocation_ratio': 4.0},
        'MEMORY_MB': {'total': 256 * 1024, 'allocation_ratio': 1.0},
        'DISK_GB': {'total': 2000, 'allocation_ratio': 1.0},
    }
    (host, first), *rest = nodes.items()
    placement.post('/resource_providers', {'uuid': first, 'name': host},
                   version='1.20')
    placement.put(f'/resource_providers/{first}/inventories',
                  {'resource_provider_generation': 0,
                   'inventories': inventories})
    placement.put(f'/resource_providers/{first}/traits',
                  {'resource_provider_generation': 1,
                   'traits': [os_traits.OWNER_NOVA]}, version='1.6')
    providers = placement_models.ResourceProvider.__table__
    children = (placement_models.Inventory.__table__,
                placement_models.ResourceProviderTrait.__table__)
    with engine.begin() as conn:
        template = dict(conn.execute(providers.select().where(
            providers.c.uuid == first)).mappings().one())
        rows = {table: [dict(row) for row in conn.execute(
            table.select().where(
                table.c.resource_provider_id == template['id'])).mappings()]
            for table in children}
        del template['id']
        conn.execute(providers.insert(), [
            dict(template, uuid=uuid, name=name, root_provider_id=None)
            for name, uuid in rest])
        conn.execute(providers.update().where(
            providers.c.root_provider_id.is_(None)).values(
                root_provider_id=providers.c.id))
        ids = dict(conn.execute(sa.select(providers.c.uuid,
                                          providers.c.id)).all())
        for table, copied in rows.items():
            conn.execute(table.insert(), [
                {key: value for key, value in dict(
                    row, resource_provider_id=ids[uuid]).items()
                 if key != 'id'}
                for _name, uuid in rest for row in copied])
