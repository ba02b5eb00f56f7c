"""What a round trained (issue #33): ``training_rounds.plan``, the round's
:class:`parsing.plan.TrainingPlan` as JSON (members and their settings, tags, ensemble, seed,
warm start).

Revision ID: 0018_round_plan
Revises: 0017_queries
Create Date: 2026-11-27 13:00:00

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '0018_round_plan'
down_revision = '0017_queries'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('training_rounds', sa.Column('plan', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('training_rounds') as batch:
        batch.drop_column('plan')
