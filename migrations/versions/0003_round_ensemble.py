"""Training rounds record their ensemble method.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 11:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('training_rounds', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ensemble', sa.String(length=32), nullable=True))


def downgrade():
    with op.batch_alter_table('training_rounds', schema=None) as batch_op:
        batch_op.drop_column('ensemble')
