"""Schemas of the JSON API's request bodies (read by :func:`app.views.api_input.json_body`) and
of its answers (for ``/api/openapi.json``): a subset of JSON Schema, see :mod:`app.views.api_input`."""

from __future__ import annotations

from typing import Any

from app.job_models import JOB_STATES
from app.models import REVIEW_STATUSES
from app.services.reparse import MAX_CONSTRAINTS
from app.services.token_columns import COLUMNS
from app.views.api_input import MAX_ID

MAX_LIST = 10_000
"""Longest list accepted in a body (words of a sentence, sentence ids are far fewer)."""

Schema = dict[str, Any]

ID: Schema = {"type": "integer", "minimum": 1, "maximum": MAX_ID}
VERSION: Schema = {"type": "integer", "minimum": 0, "maximum": MAX_ID,
                   "description": "the annotation version the client edited (0: none yet)"}
HEADS: Schema = {"type": "array", "maxItems": MAX_LIST,
                 "items": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_ID},
                 "description": "heads[i-1] is the head of word i (0 = ROOT, null = none yet)"}
DEPRELS: Schema = {"type": "array", "maxItems": MAX_LIST,
                   "items": {"type": ["string", "null"], "maxLength": 64},
                   "description": "deprels[i-1] is the label of word i"}
STATUS: Schema = {"type": ["string", "null"], "enum": [*REVIEW_STATUSES, None]}
REVIEWED_WORDS: Schema = {"type": ["array", "null"], "maxItems": MAX_LIST,
                          "items": {"type": "integer", "minimum": 0, "maximum": MAX_ID},
                          "description": "1-based words marked reviewed (others are ignored)"}

TREE: Schema = {"type": "object", "required": ["heads", "deprels"],
                "properties": {"heads": HEADS, "deprels": DEPRELS}}
WORD_COLUMNS: Schema = {
    "type": ["object", "null"],
    "properties": {column: {"type": "array", "maxItems": MAX_LIST,
                            "items": {"type": "string", "maxLength": 1000}} for column in COLUMNS},
    "description": f"replaced word columns ({', '.join(COLUMNS)}), one string per word; the others "
                   "stay as in the version edited"}
HUMAN_WORDS: Schema = {"type": ["array", "null"], "maxItems": MAX_LIST,
                       "items": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                       "description": "1-based words whose arc the annotator set or confirmed (a partial "
                                      "tree; null: no provenance recorded)"}
SAVE: Schema = {"type": "object", "required": ["heads", "deprels"], "properties": {
    "heads": HEADS, "deprels": DEPRELS, "expected_version": VERSION,
    "based_on_id": {**ID, "type": ["integer", "null"]}, "reviewed_words": REVIEWED_WORDS, "status": STATUS,
    "human_words": HUMAN_WORDS, "columns": WORD_COLUMNS}}
STATE: Schema = {"type": "object", "properties": {"status": STATUS, "reviewed_words": REVIEWED_WORDS}}
REVERT: Schema = {"type": "object", "required": ["version_id"],
                  "properties": {"version_id": ID, "expected_version": VERSION}}
WORD: Schema = {"type": "integer", "minimum": 1, "maximum": MAX_LIST}
TOKEN_EDIT: Schema = {"type": "object", "required": ["operation"], "properties": {
    "operation": {"type": "string", "enum": ["split-word", "merge-words", "add-multiword", "remove-multiword",
                                             "split-sentence", "merge-sentence", "undo"]},
    "word": {**WORD, "description": "split-word, merge-words (with the next word): the word"},
    "at": {"type": "integer", "minimum": 1, "maximum": 1000,
           "description": "split-word: characters of the form that go to the first part"},
    "first": {**WORD, "description": "add-multiword, remove-multiword: the token's first word"},
    "last": {**WORD, "description": "add-multiword: its last word"},
    "form": {"type": "string", "maxLength": 200, "description": "add-multiword: its surface form"},
    "after": {**WORD, "description": "split-sentence: the last word of the first sentence"},
    "edit_id": {**ID, "description": "undo: the token edit to undo (the sentence's newest)"}}}
NOTE: Schema = {"type": "object", "required": ["body"], "properties": {"body": {"type": "string"}}}
CONSTRAINT: Schema = {"type": "object", "required": ["id", "head"], "properties": {
    "id": {"type": "integer", "description": "the constrained word (1-based)"},
    "head": {"type": "integer", "description": "its head (0 = ROOT)"},
    "deprel": {"type": ["string", "null"], "maxLength": 64, "description": "its label (null: free)"}}}
REPARSE: Schema = {"type": "object", "required": ["constraints"], "properties": {
    "constraints": {"type": "array", "maxItems": MAX_CONSTRAINTS, "items": CONSTRAINT,
                    "description": "the arcs the annotator set or confirmed"},
    "previous": {"type": ["object", "null"], "required": ["heads", "deprels"],
                 "description": "the tree the editor showed (default: the stored ensemble tree)",
                 "properties": {"heads": {"type": "array", "maxItems": MAX_LIST,
                                          "items": {"type": "integer"}},
                                "deprels": {"type": "array", "maxItems": MAX_LIST,
                                            "items": {"type": "string", "maxLength": 64}}}}}}
ADD_LABEL: Schema = {"type": "object", "required": ["label"], "properties": {
    "label": {"type": "string", "maxLength": 64,
              "description": "a universal relation with at most one subtype, e.g. advmod:emph"}}}
ADD_LABEL_OUT: Schema = {"type": "object", "required": ["label", "added", "labels"], "properties": {
    "label": {"type": "string"}, "added": {"type": "boolean"},
    "labels": {"type": "array", "items": {"type": "string"}}}}
PREANNOTATE: Schema = {"type": "object", "properties": {
    "parsers": {"type": ["string", "array", "null"], "maxItems": 100, "items": {"type": "string"},
                "description": "member names, a list or comma-separated (default: the measured set)"},
    "tags": {"type": ["string", "null"], "enum": ["gold", "predicted", None]},
    "ensemble": {"type": ["string", "null"], "maxLength": 100},
    "sentences": {"type": ["array", "null"], "maxItems": 100_000, "items": ID,
                  "description": "sentence ids to parse (default: the unannotated pool)"},
    "self_training": {"type": ["object", "null"], "properties": {
        "source": {"type": ["string", "null"]}, "select": {"type": ["string", "null"]},
        "sentences": {"type": ["integer", "string", "null"]}}},
    "warm": {"type": "boolean"},
    "raw_text": {"type": "boolean",
                 "description": "the cluster and meta-feature members learn from the pool's text"},
    "externals": {"type": ["array", "null"], "maxItems": 50, "items": {"type": "string", "maxLength": 40},
                  "description": "labels of external parsers voting in the ensemble (a voting method only)"},
    "with_round": {"type": ["integer", "null"], "minimum": 1,
                   "description": "parse with this round's models, no training (the other fields but "
                                  "sentences are ignored; default sentences: the pool no round parsed yet)"}}}

# Answers (for the OpenAPI description; open objects: more fields may be added).
ERROR: Schema = {"type": "object", "required": ["error"], "properties": {
    "error": {"type": "string"}, "field": {"type": "string", "description": "path of the wrong value"}}}
TREE_OUT: Schema = {"type": "object", "required": ["id", "version", "heads", "deprels"], "properties": {
    "id": {"type": "integer"}, "source": {"type": "string"}, "kind": {"type": "string"},
    "version": {"type": "integer"}, "heads": {"type": "array"}, "deprels": {"type": "array"},
    "user": {"type": "string"}, "based_on_id": {"type": ["integer", "null"]}}}
STATE_OUT: Schema = {"type": "object", "required": ["status", "reviewed_words"], "properties": {
    "status": {"type": "string"}, "reviewed_words": {"type": "array", "items": {"type": "integer"}}}}
EDITOR_OUT: Schema = {"type": "object", "required": ["sentence", "words", "current", "version", "labels"],
                      "properties": {"sentence": {"type": "object"}, "words": {"type": "array"},
                                     "members": {"type": "array"}, "current": {"type": "object"},
                                     "version": {"type": "integer"}, "labels": {"type": "array"},
                                     "state": STATE_OUT, "notes": {"type": "array"}}}
JOB_OUT: Schema = {"type": "object", "required": ["id", "kind", "state", "progress"], "properties": {
    "id": {"type": "integer"}, "kind": {"type": "string"},
    "state": {"type": "string", "enum": list(JOB_STATES)},
    "progress": {"type": "number"}, "message": {"type": ["string", "null"]},
    "error": {"type": ["string", "null"]}, "log_tail": {"type": "string"},
    "cancel_requested": {"type": "boolean"}, "retry_of": {"type": ["integer", "null"]}}}
VALUES_OUT: Schema = {"type": "object", "required": ["upos", "xpos", "feats", "lemmas"], "properties": {
    "upos": {"type": "array", "items": {"type": "string"}},
    "xpos": {"type": "array", "items": {"type": "string"}},
    "feats": {"type": "array", "items": {"type": "string"}}, "lemmas": {"type": "object"}}}
REPARSE_OUT: Schema = {"type": "object", "required": ["ensemble", "members", "changed"], "properties": {
    "ensemble": {"type": "object"}, "members": {"type": "array"},
    "changed": {"type": "array", "items": {"type": "integer"}}}}
