"""Load test: a realistic mix against gunicorn on PostgreSQL while a price refresh and a probe
round run on a real Celery worker.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/k3planner python -m k3planner.loadtest

Makes a throwaway database (k3planner_loadtest, dropped at the end, also on failure), migrates
it, loads the catalog and prices, and seeds LOAD_USERS (30) planners in teams, a library of
LOAD_SCENARIOS (400) saved scenarios, a price feed of LOAD_FEED_ROWS (4,000) offers served on
loopback, and LOAD_ENDPOINTS (30) probe endpoints on a loopback server, a third of which hang or
refuse. Starts gunicorn on loopback (LOAD_WORKERS (3) x LOAD_THREADS (4), DEBUG=0) and a Celery
worker on a Redis database of its own (LOAD_BROKER_URL, default redis://127.0.0.1:6379/14). Each
route is
driven by a wrk process of its own, so its latencies are its own; the mix is the share of
connections each route gets, and each connection is a planner who reads for 0 to
2 x LOAD_THINK_MS (500) ms between requests (wrk's delay(), not counted as latency). Keep that
under gunicorn's 2 s keep-alive: wrk reconnects a closed connection and thinks before it speaks,
and gunicorn's gthread worker holds a thread for a new connection until its first request.

1. Steps the load: LOAD_LEVELS (1,2,3,4,5,6,8,10,12) times the mix's connections,
   LOAD_STEP_SECONDS (30) a level, until a route's p99 passes 1 s or an error happens. The
   highest level up to which every route's p99 stayed under 200 ms with no error is the rate
   the machine sustains.
2. Drives that level (or LOAD_LEVEL) for LOAD_SECONDS (60) while a refresh of every feed
   (pricing.refresh_all; every price of the big feed has moved) and a probe round
   (probes.probe_due) run on the worker. If that misses the target, the level below is driven
   the same way: the steps carry no background work.
3. Prints requests/s, p50/p95/p99 per route, the errors, and whether the target was met.

Each connection waits for its answer before its next request (a closed loop). While answers take
far less than the think time, that is close to planners arriving independently; past saturation
the latencies understate what clients arriving at a fixed rate would see (wrk2 is not at hand).
wrk, PostgreSQL, the worker and the fake servers share the machine's cores with gunicorn, and so
does anything else running: the load average before the run is printed. gunicorn takes more
options from GUNICORN_CMD_ARGS (e.g. a --config with a post_worker_init hook).
"""

import contextlib
import http.server
import io
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"  # the servers' logs
DB_NAME = "k3planner_loadtest"
TARGET_P99_MS = 200.0
SATURATED_P99_MS = 1000.0  # the stepping stops here: requests are queueing
PASSWORD = "load-pass-123"
# Model and card pairs the builder and the API are asked about (all in the seed catalog).
PAIRS = [
    ("kimi-k3", "h100-80gb"),
    ("qwen3-32b", "h100-80gb"),
    ("llama-3.1-70b", "h200-141gb"),
    ("deepseek-v3", "b200-192gb"),
    ("gpt-oss-120b", "h100-80gb"),
]
FEED_ACCELERATORS = ["h100-80gb", "h200-141gb", "b200-192gb", "a100-80gb", "l40s-48gb"]


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    try:
        return int(value) if value else default
    except ValueError:
        sys.exit(f"{name} must be an integer, got {value!r}")


@dataclass
class Route:
    name: str
    connections: int  # at level 1: the mix
    requests: list[str] = field(default_factory=list)  # raw HTTP requests, picked at random


@dataclass
class Figures:
    requests: int
    seconds: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    errors: dict[str, int]  # non-2xx/3xx responses, socket errors, timeouts

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


# --- the data --------------------------------------------------------------------------------


def seed(*, users: int, scenarios: int, feed_url: str, endpoint_urls: list[str]) -> dict:
    """Catalog, prices, planners in teams, the library, the big feed, the endpoints."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command
    from django.db import connection

    from pricing.models import Feed, GpuPrice
    from pricing.services import feed_refresh
    from probes.models import Endpoint
    from scenarios.models import PRIVATE, PUBLIC, TEAM, Scenario
    from scenarios.services import scenario_create, scenario_inputs_from_dict, search_text
    from teams.models import Membership, Team

    call_command("migrate", verbosity=0)
    call_command("load_catalog", stdout=io.StringIO())
    call_command("load_prices", stdout=io.StringIO())

    password = make_password(PASSWORD)  # hashed once: the planners share it
    User = get_user_model()
    User.objects.bulk_create(
        User(username=f"planner{i:02d}", email=f"planner{i:02d}@example.com", password=password)
        for i in range(users)
    )
    people = list(User.objects.order_by("username"))
    teams = [Team.objects.create(name=f"Team {t}", slug=f"team-{t}") for t in range(6)]
    Membership.objects.bulk_create(
        Membership(team=teams[i % len(teams)], user=u, role="admin" if i < len(teams) else "member")
        for i, u in enumerate(people)
    )

    # A few real scenarios, then the library copied from them (as scenarios.bench does).
    templates = [
        scenario_create(
            owner=people[0],
            inputs=scenario_inputs_from_dict({"llm": llm, "accelerator": acc}),
            name=f"{llm} on {acc}",
        )
        for llm, acc in PAIRS
    ]
    copied = [f.name for f in Scenario._meta.concrete_fields if f.name != "id"]
    rows = []
    for i in range(scenarios - len(templates)):
        source, owner = templates[i % len(templates)], people[i % len(people)]
        visibility = (PRIVATE, TEAM, PUBLIC)[i % 3]
        row = Scenario(**{name: getattr(source, name) for name in copied})
        row.owner, row.visibility, row.name = owner, visibility, f"{source.name} #{i}"
        row.team = teams[(i % len(people)) % len(teams)] if visibility == TEAM else None
        row.tags = f"batch{i % 20} {'k3' if i % 5 == 0 else 'other'}"
        row.search_text = search_text(row)
        rows.append(row)
    Scenario.objects.bulk_create(rows, batch_size=1000)

    Feed.objects.update(enabled=True)  # the seed's sample feeds are refreshed too
    bulk = Feed.objects.create(name="Load test feed", format=Feed.K3PLANNER_CSV, location=feed_url)
    run = feed_refresh(feed=bulk)
    if run.status != run.OK:
        raise RuntimeError(f"the load test's feed did not load: {run.error}")

    Endpoint.objects.bulk_create(
        Endpoint(team=teams[i % len(teams)], name=f"endpoint-{i}", base_url=url, kind="vllm",
                 model_id=url.rsplit("/", 1)[-1] if "/ok/" in url else "m", timeout_s=5.0)
        for i, url in enumerate(endpoint_urls)
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]
    return {
        "postgresql": version,
        "users": len(people),
        "teams": len(teams),
        "scenarios": Scenario.objects.count(),
        "offers": GpuPrice.objects.filter(valid_until__isnull=True).count(),
        "feeds": Feed.objects.filter(enabled=True).count(),
        "endpoints": len(endpoint_urls),
    }


def feed_csv(rows: int, cents_up: int) -> bytes:
    """The big feed in k3planner's CSV: providers x accelerators x kinds x regions."""
    lines = ["provider,accelerator,usd_per_gpu_hour,kind,region"]
    for i in range(rows):
        acc = FEED_ACCELERATORS[(i // 8) % len(FEED_ACCELERATORS)]
        kind = ("on_demand", "spot")[(i // 40) % 2]
        cents = 150 + (i * 37) % 400 + cents_up
        lines.append(f"loadcloud-{i % 8},{acc},{cents / 100:.2f},{kind},region-{i // 80:03d}")
    return ("\n".join(lines) + "\n").encode()


class FeedServer:
    """The big feed at a loopback URL, as a provider publishes it (a worker reads files only
    from the shipped samples' folder). Set `body` to publish new prices."""

    def __init__(self, body: bytes):
        outer = self
        self.body = body

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", str(len(outer.body)))
                self.end_headers()
                self.wfile.write(outer.body)

            def log_message(self, format, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/prices.csv"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def endpoint_urls(server, n: int) -> list[str]:
    """Two thirds answer at once; a sixth hang until their 5 s timeout; a sixth refuse."""
    hanging = dead = n // 6
    return (
        [server.url(f"ok/model-{i}") for i in range(n - hanging - dead)]
        + [server.url("hang") for _ in range(hanging)]
        + [f"http://127.0.0.1:{port}" for port in free_ports(dead)]
    )


# --- the processes ---------------------------------------------------------------------------


def admin_sql(admin_url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql)


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def start(cmd: list[str], env: dict, log_name: str) -> subprocess.Popen:
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / log_name).open("w") as log:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise RuntimeError(f"timed out after {timeout_s:g} s waiting for {what}")


def answers(base_url: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{base_url}/api/v1/ping", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def sign_in(base_url: str, username: str) -> tuple[str, str]:
    """(sessionid, csrftoken) of a planner signed in through the login form."""
    import httpx

    with httpx.Client(base_url=base_url, timeout=30) as client:
        client.get("/account/login/")
        csrf = client.cookies["csrftoken"]
        r = client.post(
            "/account/login/",
            data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": csrf},
        )
        if r.status_code != 302 or "sessionid" not in client.cookies:
            raise RuntimeError(f"could not sign in as {username}: HTTP {r.status_code}")
        return client.cookies["sessionid"], client.cookies["csrftoken"]


def drop_queue(broker: str, queue: str) -> None:
    """Our queue's key, so no message outlives the run (results expire on their own)."""
    import redis

    with contextlib.suppress(redis.RedisError):
        redis.Redis.from_url(broker).delete(queue)


# --- the routes ------------------------------------------------------------------------------


def raw(method: str, path: str, host: str, headers: dict, body: str = "") -> str:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if method == "POST":
        lines.append(f"Content-Length: {len(body.encode())}")
    return "\r\n".join(lines) + "\r\n\r\n" + body


def routes(host: str, session: str, csrf: str) -> list[Route]:
    """The mix: a planner on the builder recomputes as they type; they browse the library and
    the prices; the builder looks up prices when they pick a card; tools call the API."""
    from scenarios.forms import builder_initial

    signed_in = {"Cookie": f"sessionid={session}; csrftoken={csrf}"}
    htmx = {**signed_in, "HX-Request": "true"}
    form = {**htmx, "Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": csrf}
    recompute = Route("builder recompute (HTMX)", 2)
    library = Route("library page", 1)
    sizing = Route("API POST /api/v1/sizing", 1)
    prices = Route("prices page", 1)
    lookup = Route("builder price lookup (HTMX)", 1)
    for llm, acc in PAIRS:
        for concurrency in (1, 8, 32):
            for rate in ("2.00", "2.50", "3.10"):
                data = {**builder_initial(), "llm": llm, "accelerator": acc}
                data.update(concurrency=concurrency, usd_per_gpu_hour=rate)
                recompute.requests.append(
                    raw("POST", "/scenarios/new/", host, form, urlencode(data))
                )
            body = {
                "model": llm,
                "accelerator": acc,
                "workload": {
                    "context_tokens": 8192,
                    "concurrency": concurrency,
                    "monthly_output_tokens": 9.6e8,
                },
                "prices": {"usd_per_gpu_hour": 2.5, "api_usd_per_m_output": 15.0},
            }
            json_headers = {"Content-Type": "application/json"}
            sizing.requests.append(
                raw("POST", "/api/v1/sizing", host, json_headers, json.dumps(body))
            )
        query = urlencode({"llm": llm, "accelerator": acc, "gpu_price": "", "api_price": ""})
        lookup.requests.append(raw("GET", f"/scenarios/new/prices/?{query}", host, htmx))
    for query in ("", "?q=qwen", "?tag=k3", "?page=3", "?model=kimi-k3", "?mine=1"):
        library.requests.append(raw("GET", f"/scenarios/{query}", host, signed_in))
    for query in ("", "?accelerator=h100-80gb", "?accelerator=b200-192gb&kind=spot"):
        prices.requests.append(raw("GET", f"/prices/{query}", host, signed_in))
    return [recompute, library, sizing, prices, lookup]


def preflight(port: int, route_list: list[Route]) -> None:
    """Each request of the mix once: it must answer 2xx, or the figures would time errors."""
    for route in route_list:
        for request in route.requests:
            closing = request.replace("\r\n", "\r\nConnection: close\r\n", 1)
            with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
                s.sendall(closing.encode())
                head = s.recv(64).decode(errors="replace")
            status = int(head.split()[1]) if head.startswith("HTTP/") else 0
            if not 200 <= status < 300:
                line = request.split("\r\n", 1)[0]
                raise RuntimeError(f"{route.name}: {line} answered {status or head!r}")


# wrk's Lua: a random request of the route's each time, a think time before it, and at the end
# the route's own latency percentiles and error counts as one JSON line.
LUA = """
local requests = %(requests)s
local counter = 0
setup = function(thread) counter = counter + 1; thread:set("seed", %(seed)d + counter) end
init = function(args) math.randomseed(seed) end
request = function() return requests[math.random(#requests)] end
delay = function() return math.random(0, %(think_ms)d * 2) end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %%d, "duration_us": %%d, "p50": %%d, "p95": %%d, "p99": %%d, ' ..
    '"non-2xx/3xx": %%d, "connect": %%d, "read": %%d, "write": %%d, "timeout": %%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    latency:percentile(99), e.status, e.connect, e.read, e.write, e.timeout))
end
"""


def lua_script(route: Route, seed: int, think_ms: int, folder: Path) -> Path:
    items = ", ".join(json.dumps(r, ensure_ascii=True) for r in route.requests)
    path = folder / f"{re.sub(r'[^a-z0-9]+', '-', route.name.lower())}.lua"
    path.write_text(LUA % {"requests": "{" + items + "}", "seed": seed, "think_ms": think_ms})
    return path


def drive(
    base_url: str, scripts: list[tuple[Route, Path]], level: int, seconds: int, during=None
) -> dict[str, Figures]:
    """One wrk per route, all at once, for `seconds`; `during(started)` runs meanwhile."""
    procs = []
    for route, script in scripts:
        cmd = ["wrk", "-t1", f"-c{route.connections * level}", f"-d{seconds}s"]
        cmd += ["--timeout", "10s", "-s", str(script), base_url]
        procs.append((route, subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)))
    try:
        if during is not None:
            during(time.monotonic())
        return {
            route.name: parse_done(proc.communicate(timeout=seconds + 60)[0])
            for route, proc in procs
        }
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.kill()


def parse_done(out: str) -> Figures:
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith("{")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no summary:\n{out}")
    d = json.loads(line)
    kinds = ("non-2xx/3xx", "connect", "read", "write", "timeout")
    return Figures(
        requests=d["requests"],
        seconds=d["duration_us"] / 1e6,
        p50_ms=d["p50"] / 1000,
        p95_ms=d["p95"] / 1000,
        p99_ms=d["p99"] / 1000,
        errors={kind: d[kind] for kind in kinds if d[kind]},
    )


def within_target(results: dict[str, Figures]) -> bool:
    return all(f.p99_ms < TARGET_P99_MS and not f.error_count for f in results.values())


# --- the run ---------------------------------------------------------------------------------


class Background:
    """Sends the price refresh and the probe round during the main run; reports on them."""

    def __init__(
        self,
        feed: FeedServer,
        feed_rows: int,
        refresh_at_s: float,
        probe_at_s: float,
        cents_up: int,
    ):
        self.feed, self.feed_rows, self.cents_up = feed, feed_rows, cents_up
        self.refresh_at_s, self.probe_at_s = refresh_at_s, probe_at_s

    def __call__(self, started: float) -> None:
        from django.utils import timezone

        from pricing.tasks import refresh_all
        from probes.tasks import probe_due

        self.started, self.since = started, timezone.now()
        time.sleep(max(0.0, started + self.refresh_at_s - time.monotonic()))
        self.feed.body = feed_csv(self.feed_rows, cents_up=self.cents_up)  # every price moves
        self.refresh_sent = time.monotonic() - started
        self.refresh = refresh_all.delay()
        time.sleep(max(0.0, started + self.probe_at_s - time.monotonic()))
        self.probe_sent = time.monotonic() - started
        self.probe = probe_due.delay()

    def report(self) -> list[str]:
        from django.db.models import Count

        from pricing.models import FeedRun
        from probes.models import ProbeResult

        feed_ids = self.refresh.get(timeout=120)

        def finished():
            runs = FeedRun.objects.filter(started_at__gte=self.since).exclude(status="running")
            return list(runs) if len(runs) >= len(feed_ids) else None

        runs = wait_for(finished, 300, "the refreshes to finish")
        probe = self.probe.get(timeout=300)
        start = (min(r.started_at for r in runs) - self.since).total_seconds()
        end = (max(r.finished_at for r in runs) - self.since).total_seconds()
        statuses = (
            ProbeResult.objects.filter(started_at__gte=self.since)
            .values_list("status")
            .annotate(n=Count("id"))
            .order_by("status")
        )
        return [
            f"price refresh: {len(runs)} feeds ({sum(r.status == 'ok' for r in runs)} ok), "
            f"{sum(r.prices_added for r in runs):,} prices added, "
            f"{sum(r.prices_unchanged for r in runs):,} unchanged; sent {self.refresh_sent:.1f} s "
            f"into the run, ran from {start:.1f} s to {end:.1f} s",
            f"probe round: {probe['probed']} endpoints in {probe['seconds']:.1f} s, sent "
            f"{self.probe_sent:.1f} s into the run ("
            + ", ".join(f"{n} {status}" for status, n in statuses)
            + ")",
        ]


def table(results: dict[str, Figures], level: int, route_list: list[Route]) -> list[str]:
    conns = {r.name: r.connections * level for r in route_list}
    head = f"{'route':<30}{'conns':>6}{'requests':>9}{'req/s':>8}{'p50 ms':>8}{'p95 ms':>8}"
    lines = [head + f"{'p99 ms':>8}{'errors':>7}"]
    for name, f in results.items():
        detail = ", ".join(f"{n} {kind}" for kind, n in f.errors.items())
        lines.append(
            f"{name:<30}{conns[name]:>6}{f.requests:>9}{f.rps:>8.1f}{f.p50_ms:>8.1f}"
            f"{f.p95_ms:>8.1f}{f.p99_ms:>8.1f}{f.error_count:>7}"
            + (f"  ({detail})" if detail else "")
        )
    lines.append(
        f"{'all routes':<30}{sum(conns.values()):>6}"
        f"{sum(f.requests for f in results.values()):>9}"
        f"{sum(f.rps for f in results.values()):>8.1f}{'':>16}"
        f"{max(f.p99_ms for f in results.values()):>8.1f}"
        f"{sum(f.error_count for f in results.values()):>7}   (p99: the worst route's)"
    )
    return lines


def find_level(base_url, scripts, route_list, levels: list[int], seconds: int) -> int:
    """The highest level up to which every level met the target (the first level if none
    did). The steps go on to saturation, for the table, and stop there."""
    print(f"\nstepping the load, {seconds} s a level, no background tasks:")
    print(f"{'level':>5}{'conns':>7}{'req/s':>9}{'errors':>8}  worst p99 (route)")
    best, all_met = levels[0], True
    for level in levels:
        results = drive(base_url, scripts, level, seconds)
        met = within_target(results)
        worst = max(results, key=lambda name: results[name].p99_ms)
        errors = sum(f.error_count for f in results.values())
        print(
            f"{level:>5}{sum(r.connections for r in route_list) * level:>7}"
            f"{sum(f.rps for f in results.values()):>9.1f}{errors:>8}"
            f"  {results[worst].p99_ms:.0f} ms ({worst}){'' if met else ': over target'}"
        )
        all_met = all_met and met
        if all_met:
            best = level
        if errors or results[worst].p99_ms > SATURATED_P99_MS:
            break
    return best


def main() -> int:
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install wrk")
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit("k3planner.loadtest needs DATABASE_URL pointing at PostgreSQL (make load)")
    seconds = env_int("LOAD_SECONDS", 60)
    step_seconds = env_int("LOAD_STEP_SECONDS", 30)
    levels = [int(x) for x in os.environ.get("LOAD_LEVELS", "1,2,3,4,5,6,8,10,12").split(",")]
    think_ms = env_int("LOAD_THINK_MS", 500)
    workers, threads = env_int("LOAD_WORKERS", 3), env_int("LOAD_THREADS", 4)
    feed_rows = env_int("LOAD_FEED_ROWS", 4000)
    broker = os.environ.get("LOAD_BROKER_URL", "redis://127.0.0.1:6379/14")
    parts = urlsplit(url)
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    queue = f"k3planner-load-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": urlunsplit(parts._replace(path=f"/{DB_NAME}")),
        "DEBUG": "0",
        "SECURE_SSL": "",
        "CELERY_BROKER_URL": broker,
        "CELERY_RESULT_BACKEND": broker,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "DJANGO_SETTINGS_MODULE": "k3planner.settings",
    }
    os.environ.update(env)  # this process seeds the database and sends the tasks

    load_before = os.getloadavg()
    admin_sql(admin_url, f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
    admin_sql(admin_url, f'CREATE DATABASE "{DB_NAME}"')
    server = worker = endpoints = feed = None
    try:
        import django

        django.setup()
        logging.getLogger("httpx").setLevel(logging.WARNING)
        from django.db import connections

        from k3planner.celery import app
        from probes.bench import ServerProcess

        started = time.monotonic()
        endpoints = ServerProcess().__enter__()
        feed = FeedServer(feed_csv(feed_rows, cents_up=0))
        seeded = seed(
            users=env_int("LOAD_USERS", 30),
            scenarios=env_int("LOAD_SCENARIOS", 400),
            feed_url=feed.url,
            endpoint_urls=endpoint_urls(endpoints, env_int("LOAD_ENDPOINTS", 30)),
        )
        connections.close_all()

        port = free_ports(1)[0]
        base_url = f"http://127.0.0.1:{port}"
        server = start(
            [sys.executable, "-m", "gunicorn", "k3planner.wsgi:application", "--bind",
             f"127.0.0.1:{port}", "--workers", str(workers), "--threads", str(threads),
             "--log-level", "warning"],
            env, "loadtest-gunicorn.log",
        )  # fmt: skip
        node = f"{queue}@{os.uname().nodename}"
        worker = start(
            [sys.executable, "-m", "celery", "-A", "k3planner", "worker", "--concurrency=2",
             "--loglevel=WARNING", "-Q", queue, "-n", node, "--without-heartbeat",
             "--without-mingle", "--without-gossip"],
            env, "loadtest-worker.log",
        )  # fmt: skip
        wait_for(lambda: answers(base_url), 60, "gunicorn")
        wait_for(lambda: app.control.ping(destination=[node], timeout=1), 60, "the worker")
        route_list = routes(f"127.0.0.1:{port}", *sign_in(base_url, "planner00"))
        preflight(port, route_list)

        print(
            f"k3planner load test: gunicorn {workers} workers x {threads} threads (DEBUG=0) on "
            f"{os.cpu_count()} "
            f"CPUs, PostgreSQL {seeded['postgresql']}, a Celery worker (2 processes) on {broker}"
        )
        print("load average before the run: {:.2f} {:.2f} {:.2f}".format(*load_before))
        print(
            f"seeded in {time.monotonic() - started:.0f} s: {seeded['users']} planners in "
            f"{seeded['teams']} teams, {seeded['scenarios']} scenarios, {seeded['offers']:,} "
            f"current GPU offers from {seeded['feeds']} feeds, {seeded['endpoints']} endpoints "
            "(a third hang or refuse)"
        )
        print(
            "mix at level 1: "
            + ", ".join(f"{r.name} {r.connections}" for r in route_list)
            + f" connections (one wrk each); each waits 0-{2 * think_ms} ms between requests"
        )
        with tempfile.TemporaryDirectory() as folder:
            scripts = [
                (r, lua_script(r, 1000 * i, think_ms, Path(folder)))
                for i, r in enumerate(route_list)
            ]
            drive(base_url, scripts, 2, 10)  # warm every worker's caches on every variant
            fixed = env_int("LOAD_LEVEL", 0)
            level = fixed or find_level(base_url, scripts, route_list, levels, step_seconds)
            # The steps run without the refresh and the probes; if the main run misses with
            # them, the level below is run too: the rate printed is the one sustained with them.
            for attempt in range(1 if fixed else 2):
                conns = sum(r.connections for r in route_list) * level
                print(
                    f"\nmain run: {seconds} s at level {level} ({conns} connections) while a "
                    "price refresh and a probe round run on the worker"
                )
                background = Background(
                    feed, feed_rows, seconds / 6, seconds / 3, cents_up=7 * (attempt + 1)
                )
                results = drive(base_url, scripts, level, seconds, during=background)
                print("\n".join(table(results, level, route_list) + background.report()))
                met = within_target(results)
                print(
                    f"\nrate: {sum(f.rps for f in results.values()):.0f} requests/s at {conns} "
                    f"connections; errors: {sum(f.error_count for f in results.values())}; "
                    f"target (no errors, every route's p99 < {TARGET_P99_MS:.0f} ms): "
                    + ("met" if met else "MISSED")
                )
                lower = [x for x in levels if x < level]
                if met or not lower:
                    break
                level = lower[-1]
        return 0 if met else 1
    finally:
        stop(server)
        stop(worker)
        if endpoints is not None:
            endpoints.__exit__(None, None, None)
        if feed is not None:
            feed.close()
        if "django" in sys.modules:
            from django.db import connections

            connections.close_all()
        admin_sql(admin_url, f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        drop_queue(broker, queue)


if __name__ == "__main__":
    raise SystemExit(main())
