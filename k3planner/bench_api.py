"""API benchmark: POST /api/v1/sizing against a trivial JSON view, under gunicorn, with wrk.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/k3planner python -m k3planner.bench_api

Makes a throwaway database (k3planner_bench_api), serves it with gunicorn on loopback, drives
each route with wrk for BENCH_SECONDS (default 10) and prints requests/s, p50, p99 and the
ratio between sizing and the trivial view (target: sizing costs at most 2x).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "k3planner_bench_api"
SIZING_BODY = {
    "model": "kimi-k3",
    "accelerator": "h100-80gb",
    "workload": {"context_tokens": 8192, "concurrency": 8, "monthly_output_tokens": 9.6e8},
    "prices": {
        "usd_per_gpu_hour": 2.5,
        "api_usd_per_m_input_hit": 0.3,
        "api_usd_per_m_input_miss": 3.0,
        "api_usd_per_m_output": 15.0,
    },
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def psql(admin_url: str, sql: str) -> None:
    subprocess.run(["psql", admin_url, "-q", "-c", sql], check=True, capture_output=True)


def wrk(url: str, seconds: int, script: str | None) -> dict:
    cmd = ["wrk", "-t2", "-c8", f"-d{seconds}s", "--latency"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run([*cmd, url], check=True, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+\w+)", out, re.M))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": lat.get("50"), "p99": lat.get("99"),
            "non_2xx": int(errors.group(1)) if errors else 0}  # fmt: skip


def to_ms(text: str) -> float:
    value, unit = re.match(r"([\d.]+)(\w+)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def main() -> None:
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install wrk")
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/k3planner")
    parts = urlparse(base)
    admin = urlunparse(parts._replace(path="/postgres"))
    bench_url = urlunparse(parts._replace(path=f"/{DB_NAME}"))
    seconds = int(os.environ.get("BENCH_SECONDS", "10"))
    env = {**os.environ, "DATABASE_URL": bench_url, "DEBUG": "0"}
    env.pop("CELERY_BROKER_URL", None)
    psql(admin, f"DROP DATABASE IF EXISTS {DB_NAME}")
    psql(admin, f"CREATE DATABASE {DB_NAME}")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "load_catalog"], cwd=ROOT, env=env, check=True, capture_output=True)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "k3planner.wsgi:application", "--bind",
         f"127.0.0.1:{port}", "--workers", "2", "--threads", "4", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        base_url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
            lua.write('wrk.method = "POST"\n')
            lua.write('wrk.headers["Content-Type"] = "application/json"\n')
            lua.write(f"wrk.body = {json.dumps(json.dumps(SIZING_BODY))}\n")
        wrk(f"{base_url}/api/v1/sizing", 2, lua.name)  # warm the workers' caches
        trivial = wrk(f"{base_url}/api/v1/ping", seconds, None)
        sizing = wrk(f"{base_url}/api/v1/sizing", seconds, lua.name)
    finally:
        server.terminate()
        server.wait(timeout=20)
        psql(admin, f"DROP DATABASE IF EXISTS {DB_NAME}")
    print(f"gunicorn 2 workers x 4 threads, wrk 2 threads x 8 connections, {seconds} s a route")
    print(f"{'route':<26}{'req/s':>10}{'p50':>10}{'p99':>10}{'non-2xx':>9}")
    for name, r in (("GET /api/v1/ping", trivial), ("POST /api/v1/sizing", sizing)):
        print(f"{name:<26}{r['rps']:>10.0f}{r['p50']:>10}{r['p99']:>10}{r['non_2xx']:>9}")
    ratio = trivial["rps"] / sizing["rps"]
    p99_ratio = to_ms(sizing["p99"]) / to_ms(trivial["p99"])
    print(f"sizing costs {ratio:.2f}x the trivial view in throughput, {p99_ratio:.2f}x at p99 "
          "(target: at most 2x)")  # fmt: skip


if __name__ == "__main__":
    main()
