"""The rest of each host's window state: expected load, its spread, and
the rise rate (``MetricsWindows.export`` beyond samples and counter).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('drs_host_state', sa.Column('trend', sa.Text))
