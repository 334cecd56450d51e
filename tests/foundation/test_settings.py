"""One settings module read from the environment; bad values fail loudly and say which."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def settings_in_env(**env):
    code = (
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE','k3planner.settings');"
    )
    code += "from django.conf import settings; s = settings;"
    code += "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.DEBUG)"
    base = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True
    )


def test_it_defaults_to_sqlite_and_in_process_tasks():
    out = settings_in_env()
    assert out.stdout.split() == ["django.db.backends.sqlite3", "True", "False"]


def test_it_runs_on_postgresql_and_a_broker_when_configured():
    out = settings_in_env(
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/x", CELERY_BROKER_URL="redis://h:6379/0"
    )
    assert out.stdout.split() == ["django.db.backends.postgresql", "False", "False"]


def test_a_bad_boolean_names_the_variable():
    out = settings_in_env(DEBUG="maybe")
    assert out.returncode != 0
    assert "DEBUG must be a boolean" in out.stderr
