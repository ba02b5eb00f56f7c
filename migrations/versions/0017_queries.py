"""Named search queries per treebank (issue #32): ``saved_queries``.

Revision ID: 0017_queries
Revises: 0016_settings
Create Date: 2026-11-27 10:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0017_queries'
down_revision = '0016_settings'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'saved_queries',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('treebank_id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=120), nullable=False),
        sa.Column('pattern', sa.Text(), nullable=False),
        sa.Column('created_by_id', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['treebank_id'], ['treebanks.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('treebank_id', 'name'),
    )
    op.create_index('ix_saved_queries_treebank_id', 'saved_queries', ['treebank_id'])


def downgrade():
    op.drop_index('ix_saved_queries_treebank_id', table_name='saved_queries')
    op.drop_table('saved_queries')
