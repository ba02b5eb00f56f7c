"""Tree versions record the UPOS tags their parsers used (predicted tags).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 01:10:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('tree_versions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('upos', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('tree_versions', schema=None) as batch_op:
        batch_op.drop_column('upos')
