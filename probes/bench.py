"""Benchmark: one sweep over 200 endpoints on loopback, half of them dead or slow.

    python -m probes.bench [--endpoints 200] [--timeout 10] [--interval 60] [--db]

Half the endpoints answer at once (a misbehaving server's /ok route), a quarter never answer
(they hang until the per-endpoint timeout), a quarter refuse the connection. Prints endpoints
probed per second and the sweep's wall time against the probe interval: the sweep must finish
well within one interval, and the healthy endpoints' latency must not grow with the bad ones.

With --db the whole scheduled sweep runs (claiming due endpoints, probing, recording each
result and status change) against the configured database, inside a transaction that is
rolled back at the end.
"""

from __future__ import annotations

import argparse
import multiprocessing
import socket
import statistics
import time
from collections import Counter

from probes import probe
from probes.testing import MisbehavingServer


class ServerProcess:
    """The misbehaving server in a process of its own, so it does not share our GIL: the
    figures then measure the prober, not the fake servers beside it."""

    def __enter__(self) -> ServerProcess:
        ctx = multiprocessing.get_context("spawn")
        self._stop, ports = ctx.Event(), ctx.Queue()
        self._proc = ctx.Process(target=_serve, args=(ports, self._stop), daemon=True)
        self._proc.start()
        self.port = ports.get(timeout=30)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"


def _serve(ports, stop) -> None:
    with MisbehavingServer() as server:
        ports.put(server.port)
        stop.wait()


def closed_ports(n: int) -> list[int]:
    sockets = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def endpoint_urls(server: ServerProcess, n: int) -> list[str]:
    good, slow = n // 2, n // 4
    dead = n - good - slow
    return (
        [server.url(f"ok/model-{i}") for i in range(good)]
        + [server.url("hang") for _ in range(slow // 2)]
        + [server.url("slow-headers/3600") for _ in range(slow - slow // 2)]
        + [f"http://127.0.0.1:{port}" for port in closed_ports(dead)]
    )


def targets_for(urls: list[str], timeout_s: float) -> list[probe.Target]:
    return [
        probe.Target(url, kind=probe.VLLM, model_id=_model(url), timeout_s=timeout_s, ref=i)
        for i, url in enumerate(urls)
    ]


def _model(url: str) -> str:
    return url.rsplit("/", 1)[-1] if "/ok/" in url else "model"


def run_network(urls, timeout_s: float, concurrency: int):
    started = time.perf_counter()
    results = probe.probe_many(targets_for(urls, timeout_s), concurrency=concurrency)
    return results, time.perf_counter() - started


def run_db(urls, timeout_s: float):
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "k3planner.settings")
    django.setup()
    from django.conf import settings
    from django.db import transaction
    from django.utils import timezone

    from probes.models import Endpoint
    from probes.services import endpoints_probe_due
    from teams.models import Team

    class Rollback(Exception):
        pass

    try:
        with transaction.atomic():
            team = Team.objects.create(name="bench", slug=f"bench-{time.time_ns()}")
            Endpoint.objects.bulk_create(
                Endpoint(team=team, name=f"ep-{i}", base_url=url, kind=probe.VLLM,
                         model_id=_model(url), timeout_s=timeout_s)
                for i, url in enumerate(urls)
            )  # fmt: skip
            started = time.perf_counter()
            report = endpoints_probe_due(now=timezone.now())
            elapsed = time.perf_counter() - started
            mine = [r for r in report.results if r.endpoint.team_id == team.pk]
            raise Rollback
    except Rollback:
        pass
    print(f"(database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}, "
          "rolled back)")  # fmt: skip
    return mine, elapsed


def report(results, elapsed: float, n: int, timeout_s: float, interval_s: float) -> None:
    counts = Counter(r.status for r in results)
    up = sorted(r.latency_ms for r in results if r.status == probe.UP and r.latency_ms)
    print(f"probed {n} endpoints in {elapsed:.2f} s wall: "
          + ", ".join(f"{v} {k}" for k, v in counts.most_common()))  # fmt: skip
    print(f"{n / elapsed:.1f} endpoints probed per second")
    print(f"per-endpoint timeout {timeout_s:g} s; interval {interval_s:g} s: "
          f"the sweep took {elapsed / interval_s:.0%} of one interval "
          f"({'within' if elapsed < interval_s else 'OVER'} it)")  # fmt: skip
    if up:
        p95 = up[int(0.95 * (len(up) - 1))]
        print(f"healthy endpoints' latency while the others hung: median "
              f"{statistics.median(up):.0f} ms, p95 {p95:.0f} ms, max {up[-1]:.0f} ms")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoints", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=10.0, help="per endpoint, seconds")
    parser.add_argument("--interval", type=float, default=60.0, help="probe interval, seconds")
    parser.add_argument("--concurrency", type=int, default=probe.DEFAULT_CONCURRENCY)
    parser.add_argument("--db", action="store_true", help="run the full sweep with the database")
    args = parser.parse_args(argv)

    with ServerProcess() as server:
        urls = endpoint_urls(server, args.endpoints)
        if args.db:
            results, elapsed = run_db(urls, args.timeout)
        else:
            results, elapsed = run_network(urls, args.timeout, args.concurrency)
        # The prober's own ceiling: the same number of endpoints, all healthy.
        healthy = [server.url(f"ok/model-{i}") for i in range(args.endpoints)]
        _, ceiling_s = run_network(healthy, args.timeout, args.concurrency)
    report(results, elapsed, len(urls), args.timeout, args.interval)
    print(f"ceiling, all {args.endpoints} healthy: {ceiling_s:.2f} s = "
          f"{args.endpoints / ceiling_s:.0f} endpoints probed per second "
          "(GET /v1/models + /health each)")  # fmt: skip
    return 0 if elapsed < args.interval else 1


if __name__ == "__main__":
    raise SystemExit(main())
