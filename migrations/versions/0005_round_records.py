"""Training rounds record when they ran, what they trained on, their scores and what they changed.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 01:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

COUNTS = ('gold_sentences', 'corrected_sentences', 'automatic_sentences', 'annotated_tokens')


def upgrade():
    with op.batch_alter_table('training_rounds', schema=None) as batch_op:
        batch_op.add_column(sa.Column('started_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True))
        for name in COUNTS:
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('self_training', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('evaluation', sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column('held_out_ids', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('scores', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('compared_sentences', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('changed_sentences', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('changed_ids', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('training_rounds', schema=None) as batch_op:
        for name in ('changed_ids', 'changed_sentences', 'compared_sentences', 'scores', 'held_out_ids',
                     'evaluation', 'self_training', *reversed(COUNTS), 'finished_at', 'started_at'):
            batch_op.drop_column(name)
