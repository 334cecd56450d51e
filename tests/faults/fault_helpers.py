"""Fault helpers: Celery workers of our own to kill, PostgreSQL and Redis to stop and start.

Every fault is undone in a `finally`: the servers the rest of the suite uses are running again
when a test ends, whatever it found. The servers are the ones DATABASE_URL and CELERY_BROKER_URL
name, found by their port, so the tests can also run against a private pair.
"""

import contextlib
import http.server
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
START_TIMEOUT_S = 60


def _is_sqlite() -> bool:
    return settings.DATABASES["default"]["ENGINE"].endswith("sqlite3")


needs_postgres = pytest.mark.skipif(
    _is_sqlite(), reason="needs PostgreSQL: set DATABASE_URL (make test); SQLite has no server"
)
needs_broker = pytest.mark.skipif(
    not settings.CELERY_BROKER_URL,
    reason="needs Redis: set CELERY_BROKER_URL (make test); without it tasks run in-process",
)


def db_url() -> str:
    """The URL of the test database (pytest-django's test_… copy) for another process."""
    from django.db import connection

    db = connection.settings_dict
    return (
        f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout_s: float, what: str, interval_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


class FileServer:
    """A loopback HTTP server answering GET /<name> with `files[name]` (swap them at will)."""

    def __init__(self, files: dict[str, bytes]):
        outer = self
        self.files = files

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = outer.files.get(self.path.lstrip("/"))
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Type", "text/csv")
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            def log_message(self, format, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{name}"

    def __enter__(self) -> "FileServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


# --- Celery workers --------------------------------------------------------------------------


@dataclass
class Worker:
    proc: subprocess.Popen
    name: str
    log_path: Path

    def pool_pids(self) -> list[int]:
        """The prefork pool's processes (the ones that run tasks)."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def kill(self) -> None:
        """SIGKILL the worker and its pool at once, as a lost machine or the OOM killer would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # pool processes left behind, if any

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_worker(queue: str, *, name: str, env: dict | None = None) -> Worker:
    """`celery worker` on `queue` against the test database, in a process group of its own so
    that it can be killed whole; returns once it answers a ping."""
    from k3planner.celery import app

    node = f"{name}-{uuid.uuid4().hex[:6]}@{os.uname().nodename}"
    log_path = ARTIFACTS / f"faults-{name}.log"
    log_path.parent.mkdir(exist_ok=True)
    full_env = {**os.environ, "DATABASE_URL": db_url(), **(env or {})}
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "k3planner", "worker", "--pool=prefork",
             "--concurrency=1", "--loglevel=INFO", "-Q", queue, "-n", node,
             "--without-heartbeat", "--without-mingle", "--without-gossip"],
            cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    worker = Worker(proc, node, log_path)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not app.control.ping(destination=[node], timeout=1):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"celery worker {node} did not start; see {log_path}")
    except BaseException:
        worker.stop()
        raise
    return worker


# --- PostgreSQL ------------------------------------------------------------------------------


def postgres_cluster() -> tuple[str, str]:
    """(version, name) of the local cluster serving the test database, found by its port."""
    if shutil.which("pg_lsclusters") is None or shutil.which("pg_ctlcluster") is None:
        pytest.skip("needs Debian's pg_ctlcluster to restart PostgreSQL (postgresql-common)")
    db = settings.DATABASES["default"]
    if (db["HOST"] or "127.0.0.1") not in ("127.0.0.1", "localhost", "::1"):
        pytest.skip(f"PostgreSQL on {db['HOST']} is not local: it cannot be restarted from here")
    port = str(db["PORT"] or 5432)
    out = subprocess.run(
        ["pg_lsclusters", "--no-header"], check=True, capture_output=True, text=True
    ).stdout
    for line in out.splitlines():
        version, name, cluster_port, *_ = line.split()
        if cluster_port == port:
            return version, name
    pytest.skip(f"no local PostgreSQL cluster listens on port {port} (pg_lsclusters)")


def pg_ctl(action: str, cluster: tuple[str, str]) -> None:
    version, name = cluster
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, name, action],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def pg_ready() -> bool:
    db = settings.DATABASES["default"]
    host, port = db["HOST"] or "127.0.0.1", str(db["PORT"] or 5432)
    return subprocess.run(["pg_isready", "-q", "-h", host, "-p", port]).returncode == 0


def pg_ensure_running(cluster: tuple[str, str]) -> None:
    """Start the cluster if it is down, and wait until it accepts connections."""
    if not pg_ready():
        with contextlib.suppress(subprocess.CalledProcessError):
            pg_ctl("start", cluster)
    wait_until(pg_ready, 60, "PostgreSQL to accept connections", interval_s=0.2)


# --- Redis -----------------------------------------------------------------------------------


@dataclass
class RedisServer:
    host: str
    port: int

    def cli(self, *args: str, check: bool = True) -> str:
        out = subprocess.run(
            ["redis-cli", "-h", self.host, "-p", str(self.port), *args],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        if check and out.returncode != 0:
            raise RuntimeError(f"redis-cli {' '.join(args)}: {out.stderr or out.stdout}")
        return out.stdout.strip()

    def up(self) -> bool:
        return self.cli("ping", check=False) == "PONG"

    def config(self) -> dict[str, str]:
        """What to start it again with: its own settings, read before it is stopped."""
        values = {}
        for key in ("bind", "dir", "logfile", "save", "appendonly"):
            lines = self.cli("config", "get", key).splitlines()
            values[key] = lines[1] if len(lines) > 1 else ""
        return values

    def shutdown(self) -> None:
        self.cli("shutdown", "nosave", check=False)  # the connection drops: no OK to check
        wait_until(lambda: not self.up(), 30, "Redis to stop")

    def start(self, config: dict[str, str]) -> None:
        subprocess.run(
            ["redis-server", "--daemonize", "yes", "--bind", *config["bind"].split(),
             "--port", str(self.port), "--save", config["save"],
             "--appendonly", config["appendonly"], "--dir", config["dir"],
             "--logfile", config["logfile"]],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
        wait_until(self.up, 30, "Redis to answer", interval_s=0.1)


def broker_redis() -> RedisServer:
    """The local Redis the broker URL names."""
    url = urlsplit(settings.CELERY_BROKER_URL)
    if url.scheme not in ("redis", "rediss"):
        pytest.skip(f"the broker is {url.scheme}://, not Redis")
    if (url.hostname or "127.0.0.1") not in ("127.0.0.1", "localhost", "::1"):
        pytest.skip(f"Redis on {url.hostname} is not local: it cannot be stopped from here")
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.skip("needs redis-server and redis-cli to stop and start Redis")
    return RedisServer(url.hostname or "127.0.0.1", url.port or 6379)
