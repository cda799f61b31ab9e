"""Standby time banked per host, for the energy power management saved.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    # Empty at first: a host in standby now counts from its drs_power
    # row's requested_at; standbys that ended before this revision are not
    # known.
    op.create_table(
        'drs_power_saved',
        sa.Column('host', sa.String(255), primary_key=True),
        sa.Column('pool', sa.String(255)),
        sa.Column('standby_seconds', sa.Float, nullable=False),
        sa.Column('updated_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
