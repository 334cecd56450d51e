"""Shared fixtures: the real Celery worker, and the cast of users.

The test command (README, `make test`) runs against PostgreSQL and Redis by setting
DATABASE_URL and CELERY_BROKER_URL. The `celery_worker` fixture starts a real worker process
on that broker, pointed at the test database, and stops it at the end of the session.
"""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
WORKER_START_TIMEOUT_S = 60


def worker_node(queue: str) -> str:
    """The name the session's worker answers to (started with -n <queue>@%h)."""
    return f"{queue}@{os.uname().nodename}"


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """A real `celery worker` process on the configured broker, using the test database."""
    if not settings.CELERY_BROKER_URL:
        pytest.skip("CELERY_BROKER_URL is not set: the worker tests need Redis (make test)")
    from django.db import connection

    from k3planner.celery import app

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        pytest.skip("the worker needs a shared database: set DATABASE_URL to PostgreSQL")
    database_url = (
        f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}"
    )
    # A queue of its own, so a stale worker from another run never takes our tasks.
    queue = f"k3planner-test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": database_url, "CELERY_TASK_DEFAULT_QUEUE": queue}
    log_path = ROOT / "test-artifacts" / "celery-worker.log"
    log_path.parent.mkdir(exist_ok=True)
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "k3planner", "worker", "--pool=prefork",
         "--concurrency=2", "--loglevel=INFO", "-Q", queue, "-n", f"{queue}@%h",
         "--without-heartbeat", "--without-mingle", "--without-gossip"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    old_queue = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    try:
        deadline = time.monotonic() + WORKER_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"celery worker exited early; see {log_path}")
            replies = app.control.ping(destination=[worker_node(queue)], timeout=1)
            if replies:
                break
        else:
            raise RuntimeError(f"celery worker did not answer within 60 s; see {log_path}")
        yield proc
    finally:
        app.conf.task_default_queue = old_queue
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    """Before a worker test's database is flushed, let the worker finish what it is running: a
    task still writing (a probe's status event after its result) deadlocks the flush."""
    if "celery_worker" not in item.fixturenames:
        return
    from k3planner.celery import app

    node = worker_node(app.conf.task_default_queue)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        inspect = app.control.inspect(destination=[node], timeout=1)
        busy = [
            task
            for found in (inspect.active(), inspect.reserved())
            for tasks in (found or {}).values()
            for task in tasks
        ]
        if not busy:
            return
        time.sleep(0.2)


@pytest.fixture
def alice(django_user_model):
    """Alice plans capacity for her team."""
    return django_user_model.objects.create_user("alice", "alice@example.com", "alice-pass-123")


@pytest.fixture
def staff(django_user_model):
    """Sam keeps the prices and the catalog current."""
    return django_user_model.objects.create_user(
        "sam", "sam@example.com", "sam-pass-123", is_staff=True, is_superuser=True
    )


@pytest.fixture(autouse=True)
def fresh_catalog_cache():
    """Each test starts from its own database, so from empty caches: SQLite reuses the ids a
    rolled-back test took, and the prices page's cache is keyed by them."""
    from django.core.cache import cache

    from sizing.selectors import catalog_changed

    catalog_changed()
    cache.clear()
    yield
    catalog_changed()
    cache.clear()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser():
    """One Debian chromium for the whole run: Playwright's sync API allows one event loop a
    thread, so every browser test shares it. Skips without chromium unless
    K3PLANNER_REQUIRE_BROWSER=1 (CI), where a missing browser fails."""
    if not os.path.exists(CHROMIUM):
        reason = f"{CHROMIUM} is missing: apt-get install -y chromium"
        if os.environ.get("K3PLANNER_REQUIRE_BROWSER") == "1":
            pytest.fail(f"K3PLANNER_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    # Playwright's sync API runs an event loop in this thread; the ORM calls tests make
    # would otherwise be refused as "async unsafe".
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
