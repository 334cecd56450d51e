# k3planner: `make run` serves the app with a seeded catalog; `make test` runs the whole suite.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1:8000
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/k3planner
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15

.PHONY: install run test lint bench load worker beat lock

$(VENV)/.installed: pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c requirements.lock -e '.[dev]'
	touch $@

install: $(VENV)/.installed

# Embedded: SQLite, Celery tasks in-process. Unset DATABASE_URL/CELERY_BROKER_URL to be sure.
run: install
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) manage.py migrate --noinput
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) manage.py load_catalog
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) manage.py load_prices
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) manage.py ensure_admin
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) manage.py runserver $(HOST)

# The whole suite, on PostgreSQL and a real Celery worker on Redis.
test: install
	scripts/services-up
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) $(PY) -m pytest $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Speed and memory figures; each prints its own (PostgreSQL ones use throwaway databases).
bench: install
	$(PY) -m sizing.bench
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m pricing.bench
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m scenarios.bench
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m probes.bench --db
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m k3planner.bench_api

# 60 s of the pages' and the API's mix under gunicorn while prices refresh and endpoints are probed.
load: install
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m k3planner.loadtest

worker: install
	$(VENV)/bin/celery -A k3planner worker --loglevel=INFO

beat: install
	$(VENV)/bin/celery -A k3planner beat --loglevel=INFO

# Refresh the constraints file after changing dependencies in pyproject.toml.
lock:
	$(PY) -m pip freeze --exclude-editable | grep -v '^-e' > requirements.lock
