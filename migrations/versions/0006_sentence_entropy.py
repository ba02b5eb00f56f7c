"""Sentence states keep the members' summed head-vote entropy (a queue order); rounds record
whether they continued an earlier round's weights (warm rounds).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 01:35:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('sentence_states', schema=None) as batch_op:
        batch_op.add_column(sa.Column('entropy', sa.Double(), nullable=True))
    with op.batch_alter_table('training_rounds', schema=None) as batch_op:
        batch_op.add_column(sa.Column('warm', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('training_rounds', schema=None) as batch_op:
        batch_op.drop_column('warm')
    with op.batch_alter_table('sentence_states', schema=None) as batch_op:
        batch_op.drop_column('entropy')
