"""External parsers of a treebank: uploaded CoNLL-U parses and plugin commands (issue #16).

Their trees are ordinary ``parser`` tree versions named by the label; this table says which
parser names are external, where their parses came from and, for a plugin, the command and
its timeout.

Revision ID: 0012
Revises: 0007 (the newest revision on this branch; the lead re-chains at merge)
Create Date: 2026-11-23 05:10:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0012'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'external_parsers',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('treebank_id', sa.Integer(), nullable=False),
        sa.Column('label', sa.String(length=40), nullable=False),
        sa.Column('command', sa.Text(), nullable=True),
        sa.Column('timeout_s', sa.Double(), nullable=False, server_default='60'),
        sa.Column('filename', sa.String(length=255), nullable=True),
        sa.Column('sentences', sa.Integer(), nullable=False, server_default='0'),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['treebank_id'], ['treebanks.id'],
                                name=op.f('fk_external_parsers_treebank_id_treebanks'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_external_parsers_user_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_external_parsers')),
        sa.UniqueConstraint('treebank_id', 'label', name=op.f('uq_external_parsers_treebank_id_label')),
    )


def downgrade():
    op.drop_table('external_parsers')
