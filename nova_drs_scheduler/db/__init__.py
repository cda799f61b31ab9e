"""The DRS database: shared state of every scheduler and ``nova-drs``.

Our own schema (``[drs_database]``), never Nova's: :mod:`.tables` defines
it, :mod:`.migration` creates and upgrades it with Alembic, :mod:`.store`
reads and writes it through oslo.db, one mixin per family of rows
(``*_rows``), in the vocabulary of :mod:`.states`.
"""
