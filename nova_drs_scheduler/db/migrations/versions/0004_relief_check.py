"""Relief checked after the move: what each move really bought.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    # NULL until the leader checks the move; moves stored before this
    # revision are checked (or set aside) by the next leader.
    op.add_column('drs_moves', sa.Column('relief_check', sa.Text))
