"""Flask-WTF forms (CSRF-protected)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import BooleanField, PasswordField, SelectField, StringField
from wtforms.validators import DataRequired, Length, Optional

SPLIT_LABELS = {"train": "Training", "dev": "Development", "test": "Test",
                "pool": "Unannotated pool"}


class LoginForm(FlaskForm):
    """User name and password."""

    username = StringField("User name", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired()])
    remember = BooleanField("Keep me signed in")


class ImportForm(FlaskForm):
    """Upload a CoNLL-U file into a new or existing treebank."""

    file = FileField("CoNLL-U file", validators=[FileRequired()])
    name = StringField("Treebank", validators=[DataRequired(), Length(max=120)])
    split = SelectField("Split", choices=SPLIT_LABELS)
    language = StringField("Language code", validators=[Optional(), Length(max=32)])
