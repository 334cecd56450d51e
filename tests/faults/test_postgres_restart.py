"""PostgreSQL restarted under a running site: a clear 503 while it is away, never a 500 or a
traceback, and pages again as soon as it is back.

The site is gunicorn as in production (DEBUG off, persistent connections with health checks)
on the test database. This restarts the PostgreSQL server the whole suite uses, so it lives in
a module of its own, and every test leaves the server running (a `finally` in the fixture).
"""

import subprocess
import sys
import threading
import time

import httpx
import pytest
from django.db import connections
from django.test import Client
from fault_helpers import (
    ROOT,
    db_url,
    free_port,
    needs_postgres,
    pg_ctl,
    pg_ensure_running,
    pg_ready,
    postgres_cluster,
    wait_until,
)

from scenarios.forms import builder_initial
from scenarios.services import scenario_create, scenario_inputs_from_dict
from sizing.services import catalog_load

pytestmark = [
    pytest.mark.integration,
    needs_postgres,
    pytest.mark.django_db(transaction=True),  # gunicorn must see the rows: commit them
]

K3 = {"llm": "kimi-k3", "accelerator": "h100-80gb"}
SIZING_BODY = {
    "model": "kimi-k3",
    "accelerator": "h100-80gb",
    "workload": {"context_tokens": 8192, "concurrency": 8, "monthly_output_tokens": 9.6e8},
    "prices": {"usd_per_gpu_hour": 2.5, "api_usd_per_m_output": 15.0},
}
HX = {"HX-Request": "true"}
THREADS = 4
CLEAR_PAGE = "k3planner is briefly unavailable"


@pytest.fixture
def cluster():
    """The PostgreSQL cluster of the test database; running again when the test ends."""
    found = postgres_cluster()
    try:
        yield found
    finally:
        pg_ensure_running(found)
        connections.close_all()  # ours died with the restart; the teardown opens a new one


@pytest.fixture
def site(alice):
    """gunicorn (one worker, THREADS threads) on the test database; Alice signed in."""
    catalog_load()
    scenario_create(owner=alice, inputs=scenario_inputs_from_dict(K3), name="K3 on H100")
    browser = Client()
    browser.force_login(alice)
    port = free_port()
    env = {"DATABASE_URL": db_url(), "DEBUG": "0", "DB_CONN_MAX_AGE": "60", "SECURE_SSL": ""}
    log_path = ROOT / "test-artifacts" / "faults-gunicorn.log"
    log_path.parent.mkdir(exist_ok=True)
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "k3planner.wsgi:application", "--bind",
             f"127.0.0.1:{port}", "--workers", "1", "--threads", str(THREADS)],
            cwd=ROOT, env={**_environ(), **env}, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    client = httpx.Client(base_url=base, timeout=10, cookies={"sessionid": _session(browser)})
    try:
        wait_until(lambda: _answers(client), 30, "gunicorn to answer", interval_s=0.1)
        client.get("/scenarios/new/")  # sets the CSRF cookie the HTMX recompute sends back
        yield client
    finally:
        client.close()
        proc.terminate()
        proc.wait(timeout=20)


def _environ() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}


def _session(browser: Client) -> str:
    return browser.cookies["sessionid"].value


def _answers(client: httpx.Client) -> bool:
    try:
        return client.get("/api/v1/ping").status_code == 200
    except httpx.TransportError:
        return False


def visit(client: httpx.Client) -> dict[str, httpx.Response]:
    """Every kind of page and API call once: route -> response."""
    csrf = {"X-CSRFToken": client.cookies.get("csrftoken", "")}  # signed in: POSTs need it
    return {
        "home": client.get("/"),
        "library": client.get("/scenarios/"),
        "builder": client.get("/scenarios/new/"),
        "recompute": client.post(
            "/scenarios/new/", data={**builder_initial(), **K3}, headers={**csrf, **HX}
        ),
        "prices": client.get("/prices/"),
        "api models": client.get("/api/v1/models"),
        "api sizing": client.post("/api/v1/sizing", json=SIZING_BODY, headers=csrf),
    }


def statuses(responses: dict[str, httpx.Response]) -> dict[str, int]:
    return {route: r.status_code for route, r in responses.items()}


def assert_clear_503(route: str, response: httpx.Response) -> None:
    assert response.status_code == 503, (route, response.status_code)
    assert response.headers["Retry-After"] == "30"
    assert "Traceback" not in response.text
    if route.startswith("api"):
        assert response.json()["status"] == 503
    else:
        assert CLEAR_PAGE in response.text


def test_while_postgresql_is_down_pages_say_so_and_work_again_after(site, cluster):
    assert set(statuses(visit(site)).values()) == {200}

    pg_ctl("stop", cluster)
    try:
        during = visit(site)
    finally:
        pg_ctl("start", cluster)
        wait_until(pg_ready, 60, "PostgreSQL to accept connections", interval_s=0.2)
    after = visit(site)

    for route, response in during.items():
        if route == "api sizing" and response.status_code == 200:
            continue  # sized from the catalog cached in-process: no database needed
        assert_clear_503(route, response)
    assert statuses(after) == dict.fromkeys(after, 200)
    assert "K3 on H100" in after["library"].text


def test_a_restart_between_two_requests_goes_unnoticed(site, cluster):
    # Every thread opens its persistent connection; the restart then kills them all.
    _in_parallel(lambda: visit(site), THREADS * 2)

    pg_ctl("restart", cluster)
    wait_until(pg_ready, 60, "PostgreSQL to accept connections", interval_s=0.2)

    # conn_health_checks: a dead connection is noticed and replaced before the view runs.
    for _ in range(3):
        assert set(statuses(visit(site)).values()) == {200}


def test_requests_in_flight_during_a_restart_get_a_page_or_a_clear_503(site, cluster):
    seen: list[tuple[str, httpx.Response]] = []
    stop = threading.Event()

    def browse():
        with httpx.Client(base_url=site.base_url, cookies=site.cookies, timeout=30) as client:
            while not stop.is_set():
                seen.extend(visit(client).items())

    browsers = [threading.Thread(target=browse) for _ in range(THREADS)]
    for b in browsers:
        b.start()
    try:
        time.sleep(1)
        pg_ctl("restart", cluster)
        wait_until(pg_ready, 60, "PostgreSQL to accept connections", interval_s=0.2)
        time.sleep(1)
    finally:
        stop.set()
        for b in browsers:
            b.join(timeout=60)

    outage = [(route, r) for route, r in seen if r.status_code != 200]
    assert outage, "no request met the restart: nothing was tested"
    for route, response in outage:
        assert_clear_503(route, response)
    assert set(statuses(visit(site)).values()) == {200}


def _in_parallel(fn, n: int) -> None:
    threads = [threading.Thread(target=fn) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
