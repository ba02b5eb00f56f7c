# arcvote: `make run` (demo server) and `make test` (whole suite) work on a fresh machine.
#   DATABASE_URL       another database for `make run` (default: SQLite in instance/)
#   TEST_DATABASE_URL  the database the tests migrate and use (default: a temporary SQLite file)
#   ARCVOTE_ADMIN_PASSWORD  the admin's password (default: a random one, printed once; set it to reset)
#   HOST, PORT         where `make run` serves (default 127.0.0.1:5000; HOST=0.0.0.0 for other machines)
#   JOB_QUEUE          sqlite (default: a queue file in instance/) or redis (REDIS_URL); see README "Deployment"
#   JOB_WORKERS        jobs `make run`'s worker runs at once (default 1)

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
FLASK := $(BIN)/flask --app app
HOST ?= 127.0.0.1
PORT ?= 5000
JOB_WORKERS ?= 1

.PHONY: run setup test lint bench load chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Each stamp is redone when pyproject.toml changes.
$(VENV)/.run-deps: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[postgres,demo,neural]'
	touch $@

$(VENV)/.test-deps: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,dev,postgres,neural]'
	touch $@

instance/config.py:
	mkdir -p instance
	$(BIN)/python -c 'import secrets; print(f"SECRET_KEY = {secrets.token_hex(32)!r}")' > $@

## setup: migrate, create the admin, import the demo treebank and pre-annotate its pool
##        (graph1, eager, hybrid on gold tags; a few minutes once, then skipped; idempotent)
setup: $(VENV)/.run-deps instance/config.py
	$(FLASK) db upgrade
	@mkdir -p instance
	$(FLASK) user ensure-admin --line-file instance/admin-line.txt
	$(FLASK) demo setup
	$(FLASK) demo preannotate

## run: setup, then serve with gunicorn on http://$(HOST):$(PORT) and run a job worker beside it
##      (rounds run in the worker; Ctrl-C, or gunicorn exiting, stops the worker too). One web
##      process with threads: the editor's re-parse keeps each sentence's parses per process, so
##      every edit finds the parse the page's warm-up made (with two processes, the first edit
##      the other one served parsed the sentence again: ~370 ms instead of ~150 at 100 words)
run: setup
	@cat instance/admin-line.txt 2>/dev/null; rm -f instance/admin-line.txt
	@echo "arcvote: open http://$(HOST):$(PORT) and sign in as the 'Admin account:' line just above says."
	@$(FLASK) worker --workers $(JOB_WORKERS) & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT; trap 'exit 130' INT TERM; \
	$(BIN)/gunicorn --bind $(HOST):$(PORT) --workers 1 --threads 8 --worker-class gthread --timeout 120 \
	  --access-logfile - 'app:create_app()'

## test: the whole suite (TEST_DATABASE_URL selects the database); the browser tests in
##       tests/browser need Debian's chromium (`make chromium`) and skip without it
test: $(VENV)/.test-deps chromium
	$(BIN)/pytest

# Best effort: needs root for apt-get; without Chromium the browser tests skip (fail under CI).
chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -qq chromium) || echo "could not install chromium: browser tests will skip"

lint: $(VENV)/.test-deps
	$(BIN)/ruff check app tests/app tests/browser bench/import_speed.py bench/page_speed.py bench/editor_speed.py bench/load.py
	$(BIN)/mypy app
	$(BIN)/mypy --explicit-package-bases tests/app
	$(BIN)/mypy --explicit-package-bases tests/browser

## bench: import and page speed (set TEST_DATABASE_URL to include PostgreSQL)
bench: $(VENV)/.test-deps
	$(BIN)/python bench/import_speed.py
	$(BIN)/python bench/page_speed.py
	$(BIN)/python bench/editor_speed.py

## load: 50 simulated annotators for 60 s against gunicorn + PostgreSQL on 127.0.0.1 (needs the server)
load: $(VENV)/.test-deps
	$(BIN)/python bench/load.py
