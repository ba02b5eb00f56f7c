"""The arc error detector's scores of the ensemble's trees (issue #32): ``sentence_states.suspicion``
and ``sentence_states.p_wrong``.

Revision ID: 0020_detector
Revises: 0019_token_edits
Create Date: 2026-11-27 13:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0020_detector'
down_revision = '0019_token_edits'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('sentence_states', schema=None) as batch_op:
        batch_op.add_column(sa.Column('suspicion', sa.Double(), nullable=True))
        batch_op.add_column(sa.Column('p_wrong', sa.JSON(), nullable=True))
        batch_op.create_index(batch_op.f('ix_sentence_states_suspicion'), ['suspicion'], unique=False)


def downgrade():
    with op.batch_alter_table('sentence_states', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_sentence_states_suspicion'))
        batch_op.drop_column('p_wrong')
        batch_op.drop_column('suspicion')
