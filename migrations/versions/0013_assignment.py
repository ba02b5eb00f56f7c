"""Assignment and double annotation: ``assignments`` (which annotator corrects which sentence,
``blind`` for double annotation, ``done_at``) and two treebank settings, ``assigned_only``
(annotators correct only sentences assigned to them) and ``annotators_per_sentence`` (k ≥ 2:
double annotation).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23 05:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade():
    # Plain ADD COLUMN: a batch copy of treebanks would drop tables other tables refer to.
    op.add_column('treebanks', sa.Column('assigned_only', sa.Boolean(), nullable=False,
                                         server_default=sa.false()))
    op.add_column('treebanks', sa.Column('annotators_per_sentence', sa.Integer(), nullable=False,
                                         server_default='1'))
    op.create_table(
        'assignments',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('sentence_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('blind', sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column('assigned_by_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('done_at', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['sentence_id'], ['sentences.id'], ondelete='CASCADE',
                                name=op.f('fk_assignments_sentence_id_sentences')),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_assignments_user_id_users')),
        sa.ForeignKeyConstraint(['assigned_by_id'], ['users.id'],
                                name=op.f('fk_assignments_assigned_by_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_assignments')),
        sa.UniqueConstraint('sentence_id', 'user_id', name=op.f('uq_assignments_sentence_id_user_id')),
    )
    op.create_index(op.f('ix_assignments_user_id'), 'assignments', ['user_id'])


def downgrade():
    op.drop_index(op.f('ix_assignments_user_id'), table_name='assignments')
    op.drop_table('assignments')
    with op.batch_alter_table('treebanks', schema=None) as batch_op:
        batch_op.drop_column('annotators_per_sentence')
        batch_op.drop_column('assigned_only')
