"""Price ingest and selector benchmark on PostgreSQL: `python -m pricing.bench`.

Needs DATABASE_URL pointing at a PostgreSQL server. Creates a throwaway database
(k3planner_bench), migrates it, loads the catalog's accelerators, then:

1. ingests 100,000 GPU price rows from a k3planner CSV through the feed path (parse, match,
   compare, store in one transaction), re-runs the same file (idempotent: adds nothing), and
   runs it again with 10% of the prices moved;
2. times each selector at 1,000,000 GPU rows in two shapes — the 100,000 ingested offers with
   10 monthly prices each (a stress: far more offers than the public catalogs list), and 20,000
   offers with a price a week for a year — and 1,000,000 API rows (20,000 × 50), as of today
   and as of a past date.

Targets (issue 4): ingest ≥ 20,000 rows/s; each selector under 20 ms. The cheapest offer per
accelerator is a *current* selector; its time as of a past date is printed for information and
not held to the target, as are the prices page's aggregates, which run once per version of the
prices (the page caches its tables) and grow with the number of current offers. `--keep` keeps
the database; otherwise it is dropped at the end, also on failure.
"""

import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

BENCH_DB = "k3planner_bench"
INGEST_ROWS = 100_000
HISTORY_DATES = 10  # 100,000 series × 10 = 1,000,000 GPU rows
API_SERIES = 20_000
API_DATES = 50  # 20,000 × 50 = 1,000,000 API rows
PROVIDERS = 20
REALISTIC_SERIES = 20_000
REALISTIC_DATES = 50  # 20,000 series × 50 weekly prices = 1,000,000 GPU rows
GPU_INSERT_COLUMNS = (
    'provider_id, accelerator_id, kind, term_months, region, zone, gpu_count, "offer", '
    "usd_per_gpu_hour, effective_date, valid_until, source, source_url, note, created_at"
)
REPEATS = 30
TARGET_INGEST_ROWS_S = 20_000
TARGET_SELECTOR_MS = 20.0


def main() -> int:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        print("pricing.bench needs DATABASE_URL pointing at PostgreSQL", file=sys.stderr)
        return 2
    parts = urlsplit(url)
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    bench_url = urlunsplit(parts._replace(path=f"/{BENCH_DB}"))
    _admin(admin_url, f'DROP DATABASE IF EXISTS "{BENCH_DB}"')
    _admin(admin_url, f'CREATE DATABASE "{BENCH_DB}"')
    os.environ["DATABASE_URL"] = bench_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "k3planner.settings")
    try:
        import django

        django.setup()
        return _run()
    finally:
        from django.db import connections

        connections.close_all()
        if "--keep" in sys.argv:
            print(f"kept database {BENCH_DB} (--keep)")
        else:
            _admin(admin_url, f'DROP DATABASE IF EXISTS "{BENCH_DB}"')


def _admin(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


def _run() -> int:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    accelerators = _load_accelerators()
    failures = []

    print(f"PostgreSQL {_server_version()}, database {BENCH_DB}")
    print(f"\n1. Ingest {INGEST_ROWS:,} GPU price rows (k3planner CSV, one feed run)")
    data = _csv(accelerators)
    for label in ("first run", "re-run (idempotent)"):
        seconds, run = _ingest(data)
        rate = INGEST_ROWS / seconds
        print(
            f"   {label:<20} {seconds:6.2f} s  {rate:>9,.0f} rows/s  "
            f"added {run.prices_added:,}, unchanged {run.prices_unchanged:,}, "
            f"rejected {run.rows_rejected:,}"
        )
        if rate < TARGET_INGEST_ROWS_S:
            failures.append(f"ingest {label}: {rate:,.0f} rows/s < {TARGET_INGEST_ROWS_S:,}")
    changed = _csv(accelerators, bump_every=10)
    seconds, run = _ingest(changed)
    print(
        f"   {'10% of prices moved':<20} {seconds:6.2f} s  {INGEST_ROWS / seconds:>9,.0f} rows/s  "
        f"added {run.prices_added:,}, unchanged {run.prices_unchanged:,}"
    )

    from pricing.models import ApiPrice, GpuPrice, Provider
    from sizing.models import Accelerator

    providers = list(Provider.objects.order_by("pk").values_list("pk", flat=True)[:PROVIDERS])
    api_providers = [
        Provider.objects.create(name=f"bench-api-{i:02d}", slug=f"bench-api-{i:02d}", kind="api").pk
        for i in range(PROVIDERS)
    ]
    _grow_api(api_providers)
    shapes = [
        (
            "stress: the 100,000 ingested series × 10 monthly prices",
            _grow_stress,
        ),
        (
            "a year of weekly prices: 20,000 series × 50",
            lambda: _grow_realistic(dict(Accelerator.objects.values_list("slug", "pk")), providers),
        ),
    ]
    for number, (shape, grow) in enumerate(shapes, 2):
        started = time.perf_counter()
        grow()
        rebuild_s = _settle()
        print(
            f"\n{number}. Selectors at {GpuPrice.objects.count():,} GPU rows ({shape}) "
            f"and {ApiPrice.objects.count():,} API rows"
        )
        print(
            f"   generated in {time.perf_counter() - started - rebuild_s:.1f} s; "
            f"price_intervals_rebuild checked every interval in {rebuild_s:.1f} s"
        )
        print(f"   median and p95 of {REPEATS} calls, query and row building:")
        for name, call in _selector_calls():
            times, rows = _time(call)
            median, p95 = statistics.median(times), _p95(times)
            held = "(information)" not in name
            flag = "" if p95 < TARGET_SELECTOR_MS or not held else "  over target"
            print(f"   {name:<56} {median:6.2f} ms  p95 {p95:6.2f} ms  {rows:>3} rows{flag}")
            if p95 >= TARGET_SELECTOR_MS and held:
                failures.append(f"{shape}: {name.strip()}: p95 {p95:.1f} ms")

    print()
    if failures:
        print("Over target:\n  " + "\n  ".join(failures))
        return 1
    print(f"All within target (ingest ≥ {TARGET_INGEST_ROWS_S:,} rows/s, selectors < 20 ms).")
    return 0


def _server_version() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        return cursor.fetchone()[0]


def _load_accelerators() -> list[str]:
    from sizing.models import Accelerator

    path = Path(__file__).resolve().parent.parent / "sizing" / "catalog" / "accelerators.json"
    rows = json.loads(path.read_text())
    Accelerator.objects.bulk_create(
        [
            Accelerator(
                **{k: v for k, v in r.items() if k != "figures_as_of"},
                figures_as_of=dt.date.fromisoformat(r["figures_as_of"])
                if r.get("figures_as_of")
                else None,
            )
            for r in rows
        ]
    )
    return [r["slug"] for r in rows]


def _csv(accelerators: list[str], bump_every: int = 0) -> bytes:
    from pricing.feeds import GPU_COLUMNS, write_k3planner_gpu_csv

    rows = []
    for i in range(INGEST_ROWS):
        price = 1 + (i % 700) / 100
        if bump_every and i % bump_every == 0:
            price += 0.05
        rows.append(
            {
                "provider": f"bench-cloud-{i % PROVIDERS:02d}",
                "accelerator": accelerators[(i // PROVIDERS) % len(accelerators)],
                "usd_per_gpu_hour": f"{price:.4f}",
                "kind": ("on_demand", "spot")[(i // 320) % 2],
                "region": f"region-{(i // 640) % 25}",
                "gpu_count": 8,
                "offer": f"bench-{i // 16_000}-{i}",
            }
        )
    assert set(rows[0]) <= set(GPU_COLUMNS)
    return write_k3planner_gpu_csv(rows).encode()


def _ingest(data: bytes):
    from django.utils import timezone

    from pricing import feeds
    from pricing.models import FeedRun
    from pricing.services import prices_ingest

    started = time.perf_counter()
    parsed = feeds.parse("k3planner_csv", data)
    run = FeedRun.objects.create(label="bench")
    prices_ingest(parsed=parsed, run=run, effective_date=timezone.localdate())
    return time.perf_counter() - started, run


def _grow_stress() -> None:
    """1,000,000 GPU rows: the 100,000 ingested series, each with 9 older monthly rows."""
    from django.db import connection

    with connection.cursor() as cursor:
        # The moved run's same-day pairs: keep one row a series so the count is exact.
        cursor.execute("DELETE FROM pricing_gpuprice WHERE valid_until = effective_date")
        cursor.execute(
            f"""
            INSERT INTO pricing_gpuprice ({GPU_INSERT_COLUMNS})
            SELECT provider_id, accelerator_id, kind, term_months, region, zone, gpu_count,
                "offer", usd_per_gpu_hour * (1 + g * 0.02), effective_date - g * 30,
                effective_date - (g - 1) * 30, 'feed', '', 'bench history', created_at
            FROM pricing_gpuprice p
            CROSS JOIN generate_series(1, %s) AS g
            WHERE p.valid_until IS NULL
            """,
            [HISTORY_DATES - 1],
        )


def _grow_realistic(accelerators: dict[str, int], providers: list[int]) -> None:
    """1,000,000 GPU rows: 20,000 series, each with a price a week for 50 weeks."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE pricing_gpuprice")
        cursor.execute(
            f"""
            INSERT INTO pricing_gpuprice ({GPU_INSERT_COLUMNS})
            SELECT (%s::bigint[])[1 + s %% %s], (%s::bigint[])[1 + (s / %s) %% %s],
                (ARRAY['on_demand', 'spot'])[1 + (s / 320) %% 2], 0, 'region-' || (s / 640) %% 25,
                '', 8, 'realistic-' || s, 1 + (s %% 700) / 100.0 + d * 0.01,
                current_date - d * 7, CASE WHEN d = 0 THEN NULL ELSE current_date - (d - 1) * 7 END,
                'feed', '', 'bench', now()
            FROM generate_series(0, %s - 1) AS s CROSS JOIN generate_series(0, %s - 1) AS d
            """,
            [
                providers,
                len(providers),
                list(accelerators.values()),
                len(providers),
                len(accelerators),
                REALISTIC_SERIES,
                REALISTIC_DATES,
            ],
        )


def _grow_api(providers: list[int]) -> None:
    """1,000,000 API rows: 20,000 (provider, model id) series × 50 weekly prices."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO pricing_apiprice (provider_id, model_id, usd_per_m_input_cache_hit,
                usd_per_m_input_cache_miss, usd_per_m_output, context_tokens, effective_date,
                valid_until, source, source_url, note, created_at)
            SELECT (%s::bigint[])[1 + s %% %s], 'model-' || s, 0.1 + (s %% 50) / 100.0,
                1 + (s %% 50) / 10.0, 3 + (s %% 100) / 10.0 + d * 0.01, 131072,
                current_date - d * 7, CASE WHEN d = 0 THEN NULL ELSE current_date - (d - 1) * 7 END,
                'feed', '', 'bench', now()
            FROM generate_series(0, %s - 1) AS s CROSS JOIN generate_series(0, %s - 1) AS d
            """,
            [providers, len(providers), API_SERIES, API_DATES],
        )


def _settle() -> float:
    """Check the generated intervals with the repair service (it must change nothing), analyse."""
    from django.db import connection

    from pricing.services import price_intervals_rebuild

    started = time.perf_counter()
    changed = price_intervals_rebuild()
    seconds = time.perf_counter() - started
    if changed:
        raise AssertionError(f"generated intervals disagree with the rebuild: {changed} rows")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE pricing_gpuprice")
        cursor.execute("VACUUM ANALYZE pricing_apiprice")
    return seconds


def _selector_calls():
    from pricing import selectors
    from pricing.models import GpuPrice, Provider
    from sizing.models import Accelerator

    today = dt.date.today()
    past = today - dt.timedelta(days=95)
    h100 = Accelerator.objects.get(slug="h100-80gb")
    row = GpuPrice.objects.filter(accelerator=h100, valid_until__isnull=True).first()
    provider = row.provider
    api_provider = Provider.objects.get(slug="bench-api-07")
    # The history selector reads one series' key (all its offers); pick a non-bench-api one.
    model_id = "model-1207"
    return [
        (
            "gpu_price_current (provider, accelerator, kind, region)",
            lambda: [
                selectors.gpu_price_current(
                    provider=provider, accelerator=h100, kind=row.kind, region=row.region
                )
            ],
        ),
        (
            "  same, as of 95 days ago",
            lambda: [
                selectors.gpu_price_current(
                    provider=provider,
                    accelerator=h100,
                    kind=row.kind,
                    region=row.region,
                    as_of=past,
                )
            ],
        ),
        (
            "gpu_prices_current (one accelerator, cheapest 50)",
            lambda: list(selectors.gpu_prices_current(accelerator=h100)[:50]),
        ),
        (
            "  same, as of 95 days ago",
            lambda: list(selectors.gpu_prices_current(accelerator=h100, as_of=past)[:50]),
        ),
        (
            "gpu_cheapest_offers (one per accelerator)",
            lambda: list(selectors.gpu_cheapest_offers()),
        ),
        (
            "  same, as of 95 days ago (information)",
            lambda: list(selectors.gpu_cheapest_offers(as_of=past)),
        ),
        (
            "prices page, cache miss: 10 cheapest and the count per accelerator (information)",
            lambda: selectors.gpu_offers_cheapest_of_each(partition=("accelerator_id",), limit=10),
        ),
        (
            "builder: each provider's cheapest of each kind",
            lambda: selectors.gpu_offers_cheapest_of_each(
                partition=("provider_id", "kind"), limit=1, accelerator=h100
            ),
        ),
        (
            "prices page, cache miss: a year's chart lines (information)",
            lambda: list(
                selectors.gpu_price_lines(
                    accelerator_ids=[h100.pk], since=past - dt.timedelta(days=270)
                ).items()
            ),
        ),
        (
            "prices_version (the prices page's cache key)",
            lambda: list(selectors.prices_version()),
        ),
        (
            "gpu_price_history (one series' key)",
            lambda: list(
                selectors.gpu_price_history(
                    accelerator=h100, provider=provider, kind=row.kind, region=row.region
                )
            ),
        ),
        (
            "api_price_current (provider, model id)",
            lambda: [selectors.api_price_current(provider=api_provider, model_id=model_id)],
        ),
        (
            "  same, as of 95 days ago",
            lambda: [
                selectors.api_price_current(provider=api_provider, model_id=model_id, as_of=past)
            ],
        ),
        (
            "api_prices_current (one provider, cheapest 50)",
            lambda: list(selectors.api_prices_current(provider=api_provider)[:50]),
        ),
        (
            "api_price_history (provider, model id)",
            lambda: list(selectors.api_price_history(provider=api_provider, model_id=model_id)),
        ),
    ]


def _time(call) -> tuple[list[float], int]:
    rows = len(call())  # warm the plan cache and the buffers
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times, rows


def _p95(times: list[float]) -> float:
    return sorted(times)[max(0, round(0.95 * len(times)) - 1)]


if __name__ == "__main__":
    sys.exit(main())
