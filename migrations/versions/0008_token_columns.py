"""Annotation versions keep the word columns an annotator edited: XPOS, lemmas and FEATS (UPOS
already has its column since 0004).

Revision ID: 0008
Revises: 0006
Create Date: 2026-11-23 02:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('tree_versions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('xpos', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('lemmas', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('feats', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('tree_versions', schema=None) as batch_op:
        batch_op.drop_column('feats')
        batch_op.drop_column('lemmas')
        batch_op.drop_column('xpos')
