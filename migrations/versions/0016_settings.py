"""The treebank settings page and invitations with a role (issue #30): ``treebanks.extra_labels``,
``extra_feats`` (a curator's additions to the label and feature inventories) and
``guidelines_url``; ``account_tokens.treebank_id`` and ``role`` (an owner's invitation joins the
new account to the treebank with that role).

Revision ID: 0016_settings
Revises: 0015
Create Date: 2026-11-27 09:50:00

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '0016_settings'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('treebanks') as batch:
        batch.add_column(sa.Column('extra_labels', sa.JSON(), nullable=False, server_default='[]'))
        batch.add_column(sa.Column('extra_feats', sa.JSON(), nullable=False, server_default='[]'))
        batch.add_column(sa.Column('guidelines_url', sa.String(length=2000), nullable=False,
                                   server_default=''))
    with op.batch_alter_table('account_tokens') as batch:
        batch.add_column(sa.Column('treebank_id', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('role', sa.String(length=16), nullable=True))
        batch.create_foreign_key('fk_account_tokens_treebank_id_treebanks', 'treebanks',
                                 ['treebank_id'], ['id'], ondelete='CASCADE')


def downgrade():
    with op.batch_alter_table('account_tokens') as batch:
        batch.drop_constraint('fk_account_tokens_treebank_id_treebanks', type_='foreignkey')
        batch.drop_column('role')
        batch.drop_column('treebank_id')
    with op.batch_alter_table('treebanks') as batch:
        batch.drop_column('guidelines_url')
        batch.drop_column('extra_feats')
        batch.drop_column('extra_labels')
