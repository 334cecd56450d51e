"""Scenario pages benchmark on PostgreSQL: `python -m scenarios.bench`.

Needs DATABASE_URL pointing at a PostgreSQL server. Creates a throwaway database
(k3planner_scenarios_bench), migrates it, loads the catalog, some dated prices and 10,000 saved
scenarios spread over owners, teams and visibilities, then times with Django's test client
(in-process, server time only: routing, middleware, queries, engine, templates):

1. the builder's HTMX recompute of the article's K3 scenario (a different field each time);
2. the library with 10,000 scenarios: first page, a search, a tag filter, a deep page;
3. compare with 6 scenarios.

Target (issue 6): p95 under 50 ms each. The database is dropped at the end, also on failure.
"""

import os
import statistics
import sys
import time
from urllib.parse import urlsplit, urlunsplit

BENCH_DB = "k3planner_scenarios_bench"
SCENARIOS = 10_000
WARMUP = 5
REPEATS = 60
TARGET_P95_MS = 50.0


def main() -> int:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        print("scenarios.bench needs DATABASE_URL pointing at PostgreSQL", file=sys.stderr)
        return 2
    parts = urlsplit(url)
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{BENCH_DB}"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "k3planner.settings")
    _admin(admin_url, f'DROP DATABASE IF EXISTS "{BENCH_DB}"')
    _admin(admin_url, f'CREATE DATABASE "{BENCH_DB}"')
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


def _seed():
    import datetime as dt
    from decimal import Decimal

    from django.contrib.auth import get_user_model

    from pricing.models import ApiPrice, GpuPrice, Provider
    from pricing.services import api_price_record, gpu_price_record
    from scenarios.models import PRIVATE, PUBLIC, TEAM, Scenario
    from scenarios.services import scenario_create, scenario_inputs_from_dict, search_text
    from sizing.models import Accelerator, LLMModel
    from sizing.services import catalog_load
    from teams.models import Membership, Team

    catalog_load()
    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-pass-123")
    bob = users.create_user("bob", password="bob-pass-123")
    charlie = users.create_user("charlie", password="charlie-pass-123")
    team = Team.objects.create(name="Capacity", slug="capacity")
    other = Team.objects.create(name="Elsewhere", slug="elsewhere")
    Membership.objects.bulk_create(
        [
            Membership(team=team, user=alice),
            Membership(team=team, user=bob),
            Membership(team=other, user=charlie),
        ]
    )

    # A year of weekly H100 prices from a few providers, and the article's K3 API price.
    h100 = Accelerator.objects.get(slug="h100-80gb")
    start = dt.date.today() - dt.timedelta(weeks=52)
    for i in range(4):
        provider = Provider.objects.create(name=f"Cloud {i}", slug=f"cloud-{i}")
        for week in range(0, 52, 4):
            gpu_price_record(
                price=GpuPrice(
                    provider=provider,
                    accelerator=h100,
                    usd_per_gpu_hour=Decimal("2.00") + Decimal(i) / 4 + Decimal(week % 8) / 20,
                    effective_date=start + dt.timedelta(weeks=week),
                )
            )
    moonshot = Provider.objects.create(name="Moonshot", slug="moonshot", kind="api")
    api_price_record(
        price=ApiPrice(
            provider=moonshot,
            model_id="kimi-k3",
            llm=LLMModel.objects.get(slug="kimi-k3"),
            effective_date=start,
            usd_per_m_input_cache_hit=Decimal("0.30"),
            usd_per_m_input_cache_miss=Decimal("3.00"),
            usd_per_m_output=Decimal("15.00"),
        )
    )

    # Real scenarios for a few model/card pairs, then 10,000 rows copied from them.
    pairs = [
        ("kimi-k3", "h100-80gb"),
        ("qwen3-32b", "h100-80gb"),
        ("llama-3.1-70b", "h200-141gb"),
        ("deepseek-v3", "b200-192gb"),
        ("gpt-oss-120b", "h100-80gb"),
    ]
    templates = [
        scenario_create(
            owner=alice,
            inputs=scenario_inputs_from_dict({"llm": llm, "accelerator": acc}),
            name=f"{llm} on {acc}",
        )
        for llm, acc in pairs
    ]
    copied = [f.name for f in Scenario._meta.concrete_fields if f.name not in ("id",)]
    shapes = [  # (owner, visibility, team): what Alice sees is ~8,000 of the 10,000
        (alice, PRIVATE, None),
        (alice, TEAM, team),
        (bob, TEAM, team),
        (charlie, PUBLIC, None),
        (charlie, PRIVATE, None),
    ]
    rows = []
    for i in range(SCENARIOS):
        source = templates[i % len(templates)]
        owner, visibility, shared = shapes[i % len(shapes)]
        fields = {name: getattr(source, name) for name in copied}
        fields.update(
            owner=owner,
            visibility=visibility,
            team=shared,
            name=f"{source.name} #{i}",
            tags=f"bench batch{i % 50} {'k3' if i % 5 == 0 else 'other'}",
        )
        row = Scenario(**fields)
        row.search_text = search_text(row)
        rows.append(row)
    Scenario.objects.bulk_create(rows, batch_size=2000)
    return alice, templates


def _time(client, method: str, url: str, data=None, headers=None, vary=None):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times = []
    queries = 0
    for i in range(WARMUP + REPEATS):
        payload = vary(i) if vary else data
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = getattr(client, method)(url, payload, headers=headers or {})
            elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise RuntimeError(f"{method.upper()} {url}: HTTP {response.status_code}")
        if i >= WARMUP:
            times.append(elapsed)
            queries = max(queries, len(captured))
    return times, queries


def _p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=100)[94]


def _run() -> int:
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from scenarios.forms import builder_initial
    from scenarios.models import Scenario
    from scenarios.selectors import scenarios_visible_to

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    alice, templates = _seed()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]
    print(f"PostgreSQL {version}, database {BENCH_DB}")
    print(
        f"seeded {Scenario.objects.count():,} scenarios in {time.perf_counter() - started:.1f} s; "
        f"{WARMUP} warm-up + {REPEATS} timed requests each, Django test client in-process\n"
    )

    client = Client()
    client.force_login(alice)
    hx = {"HX-Request": "true"}
    k3 = {
        **builder_initial(),
        "llm": "kimi-k3",
        "accelerator": "h100-80gb",
        "usd_per_gpu_hour": "2.50",
        "api_usd_per_m_input_hit": "0.30",
        "api_usd_per_m_input_miss": "3.00",
        "api_usd_per_m_output": "15.00",
    }
    visible = scenarios_visible_to(alice).order_by("-id")
    six = ",".join(str(s.pk) for s in visible[:6])
    cases = [
        (
            "builder recompute (HTMX, K3 on H100)",
            "post",
            "/scenarios/new/",
            None,
            hx,
            lambda i: {**k3, "hours_per_day": str(1 + i % 24)},
        ),
        ("library, first page of 10,000", "get", "/scenarios/", {}, None, None),
        ("library, search 'kimi' (HTMX)", "get", "/scenarios/", {"q": "kimi"}, hx, None),
        ("library, tag + model filter", "get", "/scenarios/", {"tag": "k3", "model": "kimi-k3"},
         None, None),
        ("library, page 200", "get", "/scenarios/", {"page": "200"}, None, None),
        ("compare 6 scenarios", "get", "/scenarios/compare/", {"ids": six}, None, None),
    ]  # fmt: skip
    failures = []
    print(f"{'':40} {'median':>9} {'p95':>9} {'queries':>8}")
    for label, method, url, data, headers, vary in cases:
        times, queries = _time(client, method, url, data, headers, vary)
        median, p95 = statistics.median(times), _p95(times)
        flag = "" if p95 < TARGET_P95_MS else "  over target"
        print(f"{label:40} {median:7.1f}ms {p95:7.1f}ms {queries:8}{flag}")
        if p95 >= TARGET_P95_MS:
            failures.append(label)
    print(f"\ntarget: p95 < {TARGET_P95_MS:.0f} ms each")
    if failures:
        print("OVER TARGET: " + "; ".join(failures))
        return 1
    print("all within target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
