"""Annotation tree versions record each arc's provenance: set or confirmed by a person
("human") or filled in by the constrained ensemble ("parser"), for partial trees.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 04:40:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('tree_versions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('provenance', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('tree_versions', schema=None) as batch_op:
        batch_op.drop_column('provenance')
