"""Data safety on PostgreSQL: a backup, a dropped database and a restore give back the same
scenarios and prices; every migration can be reversed and applied again."""

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE_URL = os.environ.get("DATABASE_URL", "")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not BASE_URL.startswith("postgres"), reason="needs DATABASE_URL on PostgreSQL (make test)"
    ),
    pytest.mark.skipif(not shutil.which("pg_dump"), reason="needs pg_dump and pg_restore"),
]

SNAPSHOT = """
from django.contrib.auth.models import User
from pricing.models import ApiPrice, GpuPrice
from scenarios.models import Scenario
rows = [
    sorted(Scenario.objects.values_list("name", "tier1_usd_per_month", "snapshot")),
    sorted(GpuPrice.objects.values_list("provider__name", "accelerator__slug", "usd_per_gpu_hour",
                                        "effective_date")),
    sorted(ApiPrice.objects.values_list("model_id", "usd_per_m_output", "effective_date")),
    sorted(User.objects.values_list("username", flat=True)),
]
print(repr(rows))
"""

SEED = """
from django.contrib.auth.models import User
from scenarios.services import scenario_create, scenario_inputs_from_dict
alice = User.objects.create_user("alice", password="alice-pass-123")
inputs = scenario_inputs_from_dict({"llm": "kimi-k3", "accelerator": "h100-80gb",
                                    "usd_per_gpu_hour": 2.5})
scenario_create(owner=alice, inputs=inputs, name="K3 on H100", tags="k3")
"""


def db_url(name: str) -> str:
    return urlunparse(urlparse(BASE_URL)._replace(path=f"/{name}"))


def run(args, url, **kw):
    env = {**os.environ, "DATABASE_URL": url}
    env.pop("CELERY_BROKER_URL", None)
    return subprocess.run(args, cwd=ROOT, env=env, check=True, capture_output=True, text=True, **kw)


def manage(url, *args, stdin=None):
    return run([sys.executable, "manage.py", *args], url, input=stdin).stdout


def psql(sql):
    run(["psql", db_url("postgres"), "-q", "-c", sql], db_url("postgres"))


@pytest.fixture
def scratch_db():
    name = f"k3planner_safety_{uuid.uuid4().hex[:8]}"
    psql(f"CREATE DATABASE {name}")
    yield name
    psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_backup_drop_restore_gives_back_the_same_scenarios_and_prices(scratch_db, tmp_path):
    url = db_url(scratch_db)
    manage(url, "migrate", "-v0")
    manage(url, "load_catalog")
    manage(url, "load_prices")
    manage(url, "shell", stdin=SEED)
    before = manage(url, "shell", stdin=SNAPSHOT)
    assert "K3 on H100" in before

    dump = tmp_path / "k3planner.dump"
    run(["scripts/backup", str(dump)], url)
    psql(f"DROP DATABASE {scratch_db} WITH (FORCE)")
    psql(f"CREATE DATABASE {scratch_db}")
    run(["scripts/restore", str(dump)], url)

    assert manage(url, "shell", stdin=SNAPSHOT) == before


def test_every_migration_reverses_and_applies_again(scratch_db):
    url = db_url(scratch_db)
    manage(url, "migrate", "-v0")
    for app in ("scenarios", "probes", "pricing", "sizing", "teams"):
        manage(url, "migrate", app, "zero", "-v0")
    manage(url, "migrate", "-v0")
    assert "[ ]" not in manage(url, "showmigrations")
