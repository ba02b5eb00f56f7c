"""Flask-WTF forms (CSRF-protected)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from wtforms import BooleanField, PasswordField, SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional

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
