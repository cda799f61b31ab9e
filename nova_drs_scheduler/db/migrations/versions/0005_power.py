"""Power management: hosts in standby or on their way, boot requests that
found no valid host, and what a recommendation asks for.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'drs_power',
        sa.Column('host', sa.String(255), primary_key=True),
        sa.Column('state', sa.String(16), nullable=False),
        sa.Column('pool', sa.String(255)),
        sa.Column('reason', sa.Text),
        sa.Column('disabled_by_drs', sa.Boolean, nullable=False),
        sa.Column('requested_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=False),
        sa.Column('detail', sa.Text),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'drs_power_requests',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('pool', sa.String(255)),
        sa.Column('reason', sa.Text, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    # Recommendations stored before this revision are all migrations: NULL.
    op.add_column('drs_recommendations',
                  sa.Column('action', sa.String(16)))
