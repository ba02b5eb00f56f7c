"""Users get a session epoch: sessions and remember-me cookies carry it, and signing out or a new
password increments it, which revokes every cookie issued before.

Revision ID: 0010
Revises: 0011
Create Date: 2026-11-23 04:10:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0010'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('session_epoch', sa.Integer(), server_default='0', nullable=False))


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('session_epoch')
