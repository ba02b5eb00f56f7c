"""Team model: roles per treebank (memberships), public/private and archived treebanks,
deactivated users, invitation/reset links and the append-only audit log.

Every existing treebank gets its creator as owner; treebanks stay private.

Revision ID: 0009
Revises: 0006
Create Date: 2026-11-24 10:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    # Plain ADD COLUMN: a batch copy of users/treebanks would drop tables other tables refer to.
    op.add_column('users', sa.Column('active', sa.Boolean(), nullable=False, server_default=sa.true()))
    op.add_column('treebanks', sa.Column('visibility', sa.String(length=8), nullable=False,
                                         server_default='private'))
    op.add_column('treebanks', sa.Column('archived_at', sa.DateTime(timezone=True), nullable=True))
    if op.get_bind().dialect.name != 'sqlite':  # SQLite cannot add a constraint to a table
        op.create_check_constraint(op.f('ck_treebanks_visibility'), 'treebanks',
                                   "visibility IN ('private', 'public')")
    op.create_table(
        'memberships',
        sa.Column('treebank_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('role', sa.String(length=16), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("role IN ('viewer', 'annotator', 'curator', 'owner')",
                           name=op.f('ck_memberships_role')),
        sa.ForeignKeyConstraint(['treebank_id'], ['treebanks.id'], ondelete='CASCADE',
                                name=op.f('fk_memberships_treebank_id_treebanks')),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memberships_user_id_users')),
        sa.PrimaryKeyConstraint('treebank_id', 'user_id', name=op.f('pk_memberships')),
    )
    op.create_index(op.f('ix_memberships_user_id'), 'memberships', ['user_id'])
    op.execute("INSERT INTO memberships (treebank_id, user_id, role, created_at) "
               "SELECT id, created_by_id, 'owner', created_at FROM treebanks")
    op.create_table(
        'account_tokens',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=True),
        sa.Column('created_by_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("kind IN ('invite', 'reset')", name=op.f('ck_account_tokens_kind')),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_account_tokens_user_id_users')),
        sa.ForeignKeyConstraint(['created_by_id'], ['users.id'],
                                name=op.f('fk_account_tokens_created_by_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_account_tokens')),
        sa.UniqueConstraint('token_hash', name=op.f('uq_account_tokens_token_hash')),
    )
    op.create_table(
        'audit_events',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=True),
        sa.Column('action', sa.String(length=32), nullable=False),
        sa.Column('treebank_id', sa.Integer(), nullable=True),
        sa.Column('sentence_id', sa.Integer(), nullable=True),
        sa.Column('subject_user_id', sa.Integer(), nullable=True),
        sa.Column('details', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_audit_events_user_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_events')),
    )
    op.create_index('ix_audit_events_treebank', 'audit_events', ['treebank_id', 'id'])
    op.create_index('ix_audit_events_user', 'audit_events', ['user_id', 'id'])
    op.create_index('ix_audit_events_subject', 'audit_events', ['subject_user_id', 'id'])
    op.create_index('ix_audit_events_sentence', 'audit_events', ['sentence_id', 'id'])


def downgrade():
    for name in ('ix_audit_events_sentence', 'ix_audit_events_subject', 'ix_audit_events_user',
                 'ix_audit_events_treebank'):
        op.drop_index(name, table_name='audit_events')
    op.drop_table('audit_events')
    op.drop_table('account_tokens')
    op.drop_index(op.f('ix_memberships_user_id'), table_name='memberships')
    op.drop_table('memberships')
    if op.get_bind().dialect.name != 'sqlite':
        op.drop_constraint(op.f('ck_treebanks_visibility'), 'treebanks', type_='check')
    op.drop_column('treebanks', 'archived_at')
    op.drop_column('treebanks', 'visibility')
    op.drop_column('users', 'active')
