"""Durable jobs: heartbeat, worker, cancel request, log tail and retry link on jobs, a
``cancelled`` state, at most one queued or running round per treebank (a partial unique
index), worker heartbeats (``job_workers``) and model checksums on training rounds.

Revision ID: 0011
Revises: 0006
Create Date: 2026-11-23 04:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0011'
down_revision = '0009'
branch_labels = None
depends_on = None

ACTIVE_ROUND = "kind = 'preannotate' AND state IN ('queued', 'running')"


def upgrade():
    # Rounds left queued or running by the thread runner can never finish now: free their treebanks.
    op.execute("UPDATE jobs SET state = 'failed', error = 'interrupted by the upgrade to the job queue' "
               "WHERE state IN ('queued', 'running')")
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('worker', sa.String(length=160), nullable=True))
        batch_op.add_column(sa.Column('cancel_requested_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('log_tail', sa.Text(), nullable=False, server_default=''))
        batch_op.add_column(sa.Column('retry_of_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_jobs_retry_of_id_jobs'), 'jobs', ['retry_of_id'], ['id'],
                                    ondelete='SET NULL')
        batch_op.drop_constraint(batch_op.f('ck_jobs_state'), type_='check')
        batch_op.create_check_constraint(
            batch_op.f('ck_jobs_state'), "state IN ('queued', 'running', 'done', 'failed', 'cancelled')")
    op.create_index('uq_jobs_active_round', 'jobs', ['treebank_id'], unique=True,
                    sqlite_where=sa.text(ACTIVE_ROUND), postgresql_where=sa.text(ACTIVE_ROUND))
    op.create_table('job_workers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=160), nullable=False),
    sa.Column('queue', sa.String(length=16), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_job_workers')),
    sa.UniqueConstraint('name', name=op.f('uq_job_workers_name'))
    )
    with op.batch_alter_table('training_rounds', schema=None) as batch_op:
        batch_op.add_column(sa.Column('checksums', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('training_rounds', schema=None) as batch_op:
        batch_op.drop_column('checksums')
    op.drop_table('job_workers')
    op.drop_index('uq_jobs_active_round', table_name='jobs')
    op.execute("UPDATE jobs SET state = 'failed' WHERE state = 'cancelled'")
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_jobs_state'), type_='check')
        batch_op.create_check_constraint(batch_op.f('ck_jobs_state'),
                                         "state IN ('queued', 'running', 'done', 'failed')")
        batch_op.drop_constraint(batch_op.f('fk_jobs_retry_of_id_jobs'), type_='foreignkey')
        batch_op.drop_column('retry_of_id')
        batch_op.drop_column('log_tail')
        batch_op.drop_column('cancel_requested_at')
        batch_op.drop_column('worker')
        batch_op.drop_column('heartbeat_at')
