"""Maintenance mode: the hosts being drained, and which moves drain them.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

_JSON_TEXT = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql')


def upgrade():
    op.create_table(
        'drs_maintenance',
        sa.Column('host', sa.String(255), primary_key=True),
        sa.Column('reason', sa.Text),
        sa.Column('state', sa.String(16), nullable=False),
        sa.Column('disabled_by_drs', sa.Boolean, nullable=False),
        sa.Column('requested_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=False),
        sa.Column('reported_at', sa.DateTime),
        sa.Column('progress', _JSON_TEXT),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    # Moves stored before this revision were all balancing moves: NULL.
    op.add_column('drs_moves', sa.Column('drain_host', sa.String(255)))
    op.create_index('ix_drs_moves_drain_host', 'drs_moves', ['drain_host'])
