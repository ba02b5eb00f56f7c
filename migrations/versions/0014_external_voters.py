"""External parsers as voters and as HTTP plugins (issue #16): ``training_rounds.external_voters``
(which external parsers a round let vote, with their weights) and ``external_parsers.url`` (an
HTTP plugin's endpoint).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24 17:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('training_rounds', sa.Column('external_voters', sa.JSON(), nullable=True))
    op.add_column('external_parsers', sa.Column('url', sa.String(length=2000), nullable=True))


def downgrade():
    with op.batch_alter_table('external_parsers') as batch:
        batch.drop_column('url')
    with op.batch_alter_table('training_rounds') as batch:
        batch.drop_column('external_voters')
