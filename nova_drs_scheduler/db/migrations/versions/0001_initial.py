"""The DRS database: host state, decision records, moves, recommendations.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None

_JSON_TEXT = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql')


def upgrade():
    op.create_table(
        'drs_host_state',
        sa.Column('host', sa.String(255), primary_key=True),
        sa.Column('counter', sa.Integer, nullable=False),
        sa.Column('samples', sa.Text, nullable=False),
        sa.Column('cpu_percent', sa.Float),
        sa.Column('ram_percent', sa.Float),
        sa.Column('violated', sa.Boolean, nullable=False),
        sa.Column('reason', sa.Text),
        sa.Column('updated_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'drs_records',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('automation', sa.String(16), nullable=False),
        sa.Column('skipped', sa.Text),
        sa.Column('move_count', sa.Integer, nullable=False),
        sa.Column('body', _JSON_TEXT, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_drs_records_created_at', 'drs_records',
                    ['created_at'])
    op.create_table(
        'drs_moves',
        sa.Column('record_id', sa.String(36),
                  sa.ForeignKey('drs_records.id', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('instance', sa.String(36), primary_key=True),
        sa.Column('status', sa.String(32), nullable=False),
        sa.Column('outcome', sa.Text, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_drs_moves_status', 'drs_moves', ['status'])
    op.create_table(
        'drs_recommendations',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('instance', sa.String(36), nullable=False),
        sa.Column('source', sa.String(255), nullable=False),
        sa.Column('destination', sa.String(255), nullable=False),
        sa.Column('reason', sa.Text, nullable=False),
        sa.Column('state', sa.String(16), nullable=False),
        sa.Column('detail', sa.Text),
        sa.Column('record_id', sa.String(36)),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_drs_recommendations_instance',
                    'drs_recommendations', ['instance'])
    op.create_index('ix_drs_recommendations_state', 'drs_recommendations',
                    ['state'])
