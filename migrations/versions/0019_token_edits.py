"""Token and sentence split and merge (issue #32): ``token_edits``.

Revision ID: 0019_token_edits
Revises: 0018_round_plan
Create Date: 2026-11-27 13:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0019_token_edits'
down_revision = '0018_round_plan'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'token_edits',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('sentence_id', sa.Integer(), nullable=False),
        sa.Column('operation', sa.String(length=24), nullable=False),
        sa.Column('params', sa.JSON(), nullable=False),
        sa.Column('before', sa.JSON(), nullable=False),
        sa.Column('written', sa.JSON(), nullable=False),
        sa.Column('last_tree_id', sa.Integer(), nullable=False),
        sa.Column('undone_by_id', sa.Integer(), nullable=True),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "operation IN ('split-word', 'merge-words', 'add-multiword', 'remove-multiword', "
            "'split-sentence', 'merge-sentence', 'undo')", name=op.f('ck_token_edits_operation')),
        sa.ForeignKeyConstraint(['sentence_id'], ['sentences.id'], name=op.f('fk_token_edits_sentence_id_sentences'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['undone_by_id'], ['token_edits.id'],
                                name=op.f('fk_token_edits_undone_by_id_token_edits'), ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_token_edits_user_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_token_edits')),
    )
    op.create_index(op.f('ix_token_edits_sentence_id'), 'token_edits', ['sentence_id'])


def downgrade():
    op.drop_index(op.f('ix_token_edits_sentence_id'), table_name='token_edits')
    op.drop_table('token_edits')
