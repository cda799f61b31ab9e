"""The maintenance queue: hosts waiting for their turn to drain.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    # Rows stored before this revision are all hosts draining: NULL.
    op.add_column('drs_maintenance',
                  sa.Column('queue_position', sa.Integer))
