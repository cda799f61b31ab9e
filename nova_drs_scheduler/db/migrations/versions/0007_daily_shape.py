"""Each pool's demand by time of day, learnt by power management.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    # Empty at first: the leader learns each pool's day again from its
    # next period.
    op.create_table(
        'drs_daily_shape',
        sa.Column('pool', sa.String(255), primary_key=True),
        sa.Column('bin', sa.Integer, primary_key=True, autoincrement=False),
        sa.Column('seconds', sa.Integer, nullable=False),
        sa.Column('demand', sa.Float, nullable=False),
        sa.Column('days', sa.Integer, nullable=False),
        sa.Column('day', sa.Integer, nullable=False),
        sa.Column('weight', sa.Float, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
