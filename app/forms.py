"""Flask-WTF forms (CSRF-protected)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import (
    BooleanField,
    FloatField,
    IntegerField,
    PasswordField,
    SelectField,
    SelectMultipleField,
    StringField,
    TextAreaField,
)
from wtforms.validators import DataRequired, EqualTo, InputRequired, Length, NumberRange, Optional

from app.models import ROLES, VISIBILITIES
from app.services.queue import DEFAULT_ORDER, ORDERS

SPLIT_LABELS = {"train": "Training", "dev": "Development", "test": "Test",
                "pool": "Unannotated pool"}


class LoginForm(FlaskForm):
    """User name and password."""

    username = StringField("User name", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired()])
    remember = BooleanField("Keep me signed in")


IMPORT_FORMATS = {"conllu": "CoNLL-U", "text": "Plain text (running text)",
                  "lines": "Plain text (one sentence per line)"}


class ImportForm(FlaskForm):
    """Upload a CoNLL-U or plain-text file, or paste text, into a new or existing treebank."""

    file = FileField("File")
    text = TextAreaField("Or paste plain text", validators=[Optional()])
    file_format = SelectField("Format", choices=IMPORT_FORMATS, default="conllu")
    name = StringField("Treebank", validators=[DataRequired(), Length(max=120)])
    split = SelectField("Split", choices=SPLIT_LABELS)
    language = StringField("Language code", validators=[Optional(), Length(max=32)])

    def validate(self, extra_validators: object = None) -> bool:
        """Also require a file or pasted text (not both)."""
        valid = bool(super().validate(extra_validators))
        has_file = bool(self.file.data and getattr(self.file.data, "filename", ""))
        has_text = bool((self.text.data or "").strip())
        if has_file == has_text:
            self.file.errors = [*self.file.errors,
                                "Choose a file or paste text." if not has_file else
                                "Choose a file or paste text, not both."]
            return False
        return valid


class PasswordChangeForm(FlaskForm):
    """A signed-in user changes their own password."""

    current = PasswordField("Current password", validators=[DataRequired()])
    password = PasswordField("New password", validators=[DataRequired(), Length(min=8, max=200)])
    confirm = PasswordField("New password again",
                            validators=[DataRequired(), EqualTo("password", "The two passwords differ.")])


class LinkForm(FlaskForm):
    """Opened from an invitation (user name and password) or a reset link (password only)."""

    username = StringField("User name", validators=[Optional(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired(), Length(min=8, max=200)])
    confirm = PasswordField("Password again",
                            validators=[DataRequired(), EqualTo("password", "The two passwords differ.")])


class UserCreateForm(FlaskForm):
    """An admin creates an account."""

    username = StringField("User name", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired(), Length(min=8, max=200)])
    admin = BooleanField("Site administrator")


class MemberForm(FlaskForm):
    """An owner gives a user a role on the treebank."""

    username = StringField("User name", validators=[DataRequired(), Length(max=80)])
    role = SelectField("Role", choices={role: role for role in ROLES}, default="annotator")


class VisibilityForm(FlaskForm):
    """Private (members only) or public (every signed-in user reads)."""

    visibility = SelectField("Who may read", choices=dict(zip(
        VISIBILITIES, ("Members only (private)", "Every signed-in user (public)"), strict=True)))


class ConfirmNameForm(FlaskForm):
    """Deleting needs the name typed again."""

    confirm = StringField("Type the name to confirm", validators=[DataRequired(), Length(max=255)])


class ParseUploadForm(FlaskForm):
    """Another parser's CoNLL-U output for a treebank, stored as an external parser."""

    file = FileField("CoNLL-U file", validators=[FileRequired("Choose a CoNLL-U file.")])
    label = StringField("Parser label", validators=[DataRequired(), Length(max=40)])


class PluginForm(FlaskForm):
    """An external parser run during pre-annotation: an HTTP endpoint or (site admins) a command."""

    label = StringField("Parser label", validators=[DataRequired(), Length(max=40)])
    kind = SelectField("Kind", choices={"http": "HTTP endpoint", "command": "Command on the server"},
                       default="http")
    url = StringField("Endpoint URL", validators=[Optional(), Length(max=2000)])
    command = StringField("Command", validators=[Optional(), Length(max=2000)])
    timeout = FloatField("Timeout (seconds per batch)", default=60.0,
                         validators=[InputRequired(), NumberRange(min=0.1, max=3600)])


class AssignForm(FlaskForm):
    """An owner hands sentences to annotators: the next ``count`` unassigned sentences of the
    queue (in ``order``, from ``split``), or explicit sentence ``ids``."""

    annotators = SelectMultipleField("Annotators", choices=[], validate_choice=False)
    count = IntegerField("How many sentences", validators=[Optional(), NumberRange(min=1, max=10_000)])
    order = SelectField("Queue order", choices={order: order.replace("-", " ") for order in ORDERS},
                        default=DEFAULT_ORDER)
    split = SelectField("From split", choices={s: s for s in ("pool", "train", "dev", "test", "all")},
                        default="pool")
    ids = TextAreaField("Or these sentence ids", validators=[Optional(), Length(max=100_000)])


class AssignmentSettingsForm(FlaskForm):
    """The treebank's assignment rules."""

    assigned_only = BooleanField("Annotators correct only sentences assigned to them")
    annotators_per_sentence = IntegerField(
        "Annotators per sentence", default=1, validators=[DataRequired(), NumberRange(min=1, max=5)])


class SettingsForm(FlaskForm):
    """A treebank's settings page (curators and owners; :mod:`app.services.settings`)."""

    language = StringField("Language code", validators=[Optional(), Length(max=32)])
    guidelines_url = StringField("Guidelines link", validators=[Optional(), Length(max=2000)])
    extra_labels = TextAreaField("Labels added by curators", validators=[Optional(), Length(max=20_000)])
    extra_feats = TextAreaField("Features added by curators", validators=[Optional(), Length(max=20_000)])
    annotators_per_sentence = IntegerField(
        "Annotators per sentence", validators=[Optional(), NumberRange(min=1, max=5)])


class InviteForm(FlaskForm):
    """An owner invites someone to the treebank with a role (a one-time account link)."""

    invite_role = SelectField("Role", choices={role: role for role in ROLES}, default="annotator")
