"""Rounds that learn from raw text (issue #17): ``training_rounds.raw_text`` (how much of the
treebank's pool text the round's cluster and meta-feature members learned from, and which).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 00:10:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('training_rounds', sa.Column('raw_text', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('training_rounds') as batch:
        batch.drop_column('raw_text')
