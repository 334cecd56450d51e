"""Price writes: feed runs, uploads and hand-entered prices all go through `_store`.

`_store` keeps the two rules of the price tables in one place: a row equal to the price current
for its series on its date adds nothing (feeds), and `valid_until` chains every series so that
exactly one row is current on any date (see pricing.models).
"""

import datetime as dt
import logging
import operator
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Min, Q
from django.utils import timezone

from pricing import feeds
from pricing.feeds import FeedError, Parsed, Rejection
from pricing.fetch import MAX_BYTES, fetch, is_url
from pricing.matching import KNOWN_PROVIDERS, AcceleratorMatcher, CatalogAccelerator, provider_slug
from pricing.models import ADMIN, FEED, ApiPrice, Feed, FeedRun, GpuPrice, Provider
from sizing.models import Accelerator, LLMModel

log = logging.getLogger(__name__)

# Any constant will do: it names "the price tables" to pg_advisory_xact_lock.
PRICE_LOCK_KEY = 0x6B3_9121
# The run log keeps this many rejection reasons; the count is always exact.
MAX_REJECTIONS_KEPT = 500
BATCH_SIZE = 5000
UNDATED_NOTE = "file undated: dated the day it was read"
SEED_DIR = "pricing/seed"  # relative to the project, like any relative feed location


def feed_roots() -> list[Path]:
    """Folders a file feed may be read from: the shipped samples unless settings add others."""
    default = [Path(settings.BASE_DIR) / SEED_DIR]
    return [Path(p) for p in getattr(settings, "PRICE_FEED_ROOTS", default)]


# --- runs -------------------------------------------------------------------------------------


def feed_refresh(*, feed: Feed, triggered_by=None, today: dt.date | None = None) -> FeedRun:
    """Fetch, parse and store one feed. The returned run says what happened; on any failure
    nothing was stored and the previous prices stay current."""
    _runs_abandon(feed=feed)
    run = FeedRun.objects.create(feed=feed, label=feed.name, triggered_by=triggered_by)
    undated_note = (
        f"file undated: dated {feed.observed_on:%Y-%m-%d}, when it was observed"
        if feed.observed_on
        else UNDATED_NOTE
    )

    def load() -> Parsed:
        data, filename = fetch(
            feed.location, roots=feed_roots(), base=Path(settings.BASE_DIR), **_fetch_limits()
        )
        provider = feed.provider
        if not provider and feed.format == Feed.GPUHUNT_CSV:
            provider = Path(filename).stem  # gpuhunt's catalog is one {provider}.csv a provider
        return feeds.parse(feed.format, data, provider=provider)

    return _run(
        run=run,
        load=load,
        effective_date=feed.observed_on or today or timezone.localdate(),
        source=FEED,
        source_url=feed.source_url or (feed.location if is_url(feed.location) else ""),
        undated_note=undated_note,
    )


def prices_import(
    *, data: bytes, filename: str, format: str, provider: str = "", entered_by=None
) -> FeedRun:
    """A staff upload: the same parsers and the same all-or-nothing store as a feed run."""
    run = FeedRun.objects.create(label=f"upload: {filename}"[:200], triggered_by=entered_by)
    return _run(
        run=run,
        load=lambda: feeds.parse(format, data, provider=provider),
        effective_date=timezone.localdate(),
        source=ADMIN,
        entered_by=entered_by,
        undated_note=f"uploaded {filename}; file undated: dated the day it was read",
    )


def _run(*, run: FeedRun, load, effective_date, source, **store_options) -> FeedRun:
    try:
        parsed = load()
        prices_ingest(
            parsed=parsed, run=run, effective_date=effective_date, source=source, **store_options
        )
    except FeedError as exc:
        _run_fail(run, str(exc))
    except Exception as exc:  # a worker's time limit, a database error, a bug: recorded, logged
        log.exception("price feed run %s failed", run.pk)
        _run_fail(run, f"{type(exc).__name__}: {exc}")
    return run


def _run_fail(run: FeedRun, error: str) -> None:
    run.status = FeedRun.FAILED
    run.error = error + " — nothing was changed; the previous prices stay current."
    run.finished_at = timezone.now()
    run.prices_added = run.prices_unchanged = 0
    run.save()


def _runs_abandon(*, feed: Feed) -> None:
    """A run still 'running' past the task time limit died with its worker: say so."""
    limit = getattr(settings, "CELERY_TASK_TIME_LIMIT", 360) or 360
    FeedRun.objects.filter(
        feed=feed,
        status=FeedRun.RUNNING,
        started_at__lt=timezone.now() - dt.timedelta(seconds=limit),
    ).update(
        status=FeedRun.FAILED,
        finished_at=timezone.now(),
        error="did not finish (worker stopped or timed out) — nothing was changed.",
    )


def feed_max_bytes() -> int:
    return getattr(settings, "PRICE_FEED_MAX_BYTES", MAX_BYTES)


def _fetch_limits() -> dict:
    """Settings may lower the caps (tests do); the defaults live in pricing.fetch."""
    options = {"max_bytes": feed_max_bytes()}
    if hasattr(settings, "PRICE_FEED_TIMEOUT_S"):
        options["timeout_s"] = settings.PRICE_FEED_TIMEOUT_S
    return options


# --- the store --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Candidate:
    row: int
    series: tuple
    values: tuple
    on: dt.date
    fields: dict


@transaction.atomic
def prices_ingest(
    *,
    parsed: Parsed,
    run: FeedRun,
    effective_date: dt.date,
    source: str = FEED,
    source_url: str = "",
    entered_by=None,
    undated_note: str = UNDATED_NOTE,
) -> FeedRun:
    """Match the parsed rows to the catalog and store the changed prices, all in one
    transaction; the run's counts are saved in the same transaction."""
    _lock_prices()
    now = timezone.now()
    rejections = list(parsed.rejections)
    providers, created = _providers_resolve(parsed)
    provider_ids = {name: p.pk for name, p in providers.items()}
    common = {
        "source": source,
        "feed_run_id": run.pk,
        "entered_by_id": entered_by.pk if entered_by else None,
        "created_at": now,
    }

    matcher = accelerator_matcher()
    acc_ids = dict(Accelerator.objects.values_list("slug", "id"))
    gpu = []
    for o in parsed.gpu:
        slug, why = matcher.match(o.accelerator, o.memory_gb)
        if slug is None:
            rejections.append(Rejection(o.row, "accelerator", why))
            continue
        provider_id = provider_ids[o.provider]
        note = o.note if o.effective_date else _join(o.note, undated_note)
        series = (
            provider_id,
            acc_ids[slug],
            o.kind,
            o.term_months,
            o.region,
            o.zone,
            o.gpu_count,
            o.offer,
        )
        gpu.append(
            _Candidate(
                row=o.row,
                series=series,
                values=(o.usd_per_gpu_hour,),
                on=o.effective_date or effective_date,
                fields={
                    "provider_id": provider_id,
                    "accelerator_id": series[1],
                    "kind": o.kind,
                    "term_months": o.term_months,
                    "region": o.region,
                    "zone": o.zone,
                    "gpu_count": o.gpu_count,
                    "offer": o.offer,
                    **common,
                    "usd_per_gpu_hour": o.usd_per_gpu_hour,
                    "source_url": (o.source_url or source_url)[:500],
                    "note": note[:300],
                },
            )
        )

    llm_ids = dict(LLMModel.objects.values_list("slug", "id"))
    api = []
    for o in parsed.api:
        provider_id = provider_ids[o.provider]
        note = o.note if o.effective_date else _join(o.note, undated_note)
        values = (
            o.usd_per_m_input_cache_hit,
            o.usd_per_m_input_cache_miss,
            o.usd_per_m_output,
            o.context_tokens,
        )
        api.append(
            _Candidate(
                row=o.row,
                series=(provider_id, o.model_id),
                values=values,
                on=o.effective_date or effective_date,
                fields={
                    "provider_id": provider_id,
                    "model_id": o.model_id,
                    "llm_id": llm_ids.get(o.model_id.rsplit("/", 1)[-1].lower()),
                    **dict(zip(ApiPrice.VALUE_FIELDS, values, strict=True)),
                    **common,
                    "source_url": (o.source_url or source_url)[:500],
                    "note": note[:300],
                },
            )
        )

    added_gpu, unchanged_gpu, dup_gpu = _store(GpuPrice, gpu, skip_unchanged=True)
    added_api, unchanged_api, dup_api = _store(ApiPrice, api, skip_unchanged=True)
    rejections += dup_gpu + dup_api

    unique = list(dict.fromkeys(rejections))
    unique.sort(key=lambda r: r.row)
    run.rows_read = parsed.rows_read
    run.rows_skipped = parsed.rows_skipped
    run.rows_rejected = len({r.row for r in unique})
    run.prices_added = len(added_gpu) + len(added_api)
    run.prices_unchanged = unchanged_gpu + unchanged_api
    run.rejections = [r.as_dict() for r in unique[:MAX_REJECTIONS_KEPT]]
    if len(unique) > MAX_REJECTIONS_KEPT:
        run.rejections.append(
            {"row": 0, "field": "", "reason": f"… and {len(unique) - MAX_REJECTIONS_KEPT} more"}
        )
    run.providers_created = created
    run.status = FeedRun.OK
    run.error = ""
    run.finished_at = timezone.now()
    run.save()
    return run


def _store(model, candidates: list[_Candidate], *, skip_unchanged: bool, returning: bool = False):
    """Insert the candidates that change their series; returns (added, unchanged, rejections).

    `added` holds saved model instances when `returning`, the inserted field dicts otherwise."""
    by_series: dict[tuple, _Candidate] = {}
    rejections, unchanged = [], 0
    for c in candidates:
        seen = by_series.get(c.series)
        if seen is None:
            by_series[c.series] = c
        elif seen.values == c.values:
            unchanged += 1  # the same offer listed twice
        else:
            rejections.append(
                Rejection(c.row, "", f"the same offer as row {seen.row} with another price")
            )
    if not by_series:
        return [], unchanged, rejections
    scope = _series_scope(model, by_series)
    by_date: dict[dt.date, list[_Candidate]] = defaultdict(list)
    for c in by_series.values():
        by_date[c.on].append(c)

    new, closes = [], defaultdict(list)
    for on, group in by_date.items():
        current = _open_rows(model, scope, on)
        starts = {}
        if any(c.series not in current for c in group):
            starts = _next_starts(model, scope, on)
        for c in group:
            prev = current.get(c.series)
            if prev is not None:
                prev_id, prev_values, prev_until = prev
                if skip_unchanged and prev_values == c.values:
                    unchanged += 1
                    continue
                closes[on].append(prev_id)
                valid_until = prev_until
            else:
                valid_until = starts.get(c.series)
            c.fields["effective_date"] = on
            c.fields["valid_until"] = valid_until
            new.append(c.fields)

    for on, ids in closes.items():
        for i in range(0, len(ids), BATCH_SIZE):
            model.objects.filter(id__in=ids[i : i + BATCH_SIZE]).update(valid_until=on)
    return _insert(model, new, returning=returning), unchanged, rejections


# PostgreSQL type of each field kind the price tables use, for binary COPY.
_COPY_TYPES = {
    "AutoField": "int4",  # a foreign key takes its target's type: auth's User has int ids
    "BigAutoField": "int8",
    "CharField": "varchar",
    "URLField": "varchar",
    "PositiveSmallIntegerField": "int2",
    "PositiveIntegerField": "int4",
    "DecimalField": "numeric",
    "DateField": "date",
    "DateTimeField": "timestamptz",
}


def _insert(model, rows: list[dict], *, returning: bool) -> list:
    """bulk_create; on PostgreSQL, a binary COPY unless the caller needs the saved rows back.

    COPY adapts the values in psycopg's C code: 100,000 rows take about a second where
    bulk_create's per-value preparation took ten (pricing.bench)."""
    if not rows:
        return []
    if returning or connection.vendor != "postgresql":
        return model.objects.bulk_create([model(**r) for r in rows], batch_size=BATCH_SIZE)
    names = list(rows[0])
    fields = [model._meta.get_field(n) for n in names]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    values = operator.itemgetter(*names)
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types(
            [
                _COPY_TYPES[(f.target_field if f.is_relation else f).get_internal_type()]
                for f in fields
            ]
        )
        for r in rows:
            copy.write_row(values(r))
    return rows


def _series_scope(model, series: dict) -> Q:
    """A filter covering the candidates' series, shaped for the tables' indexes: GPU prices by
    (accelerator, kind, valid_until), API prices by (provider, valid_until)."""
    if model is GpuPrice:
        return Q(
            provider_id__in=sorted({s[0] for s in series}),
            accelerator_id__in=sorted({s[1] for s in series}),
            kind__in=sorted({s[2] for s in series}),
        )
    return Q(provider_id__in=sorted({s[0] for s in series}))


def _open_rows(model, scope: Q, on: dt.date) -> dict[tuple, tuple]:
    """series -> (id, values, valid_until) of the row current on `on`."""
    n = len(model.SERIES_FIELDS)
    rows = (
        model.objects.filter(scope, effective_date__lte=on)
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=on))
        .values_list(*model.SERIES_FIELDS, *model.VALUE_FIELDS, "id", "valid_until")
    )
    return {r[:n]: (r[-2], r[n:-2], r[-1]) for r in rows.iterator(chunk_size=10_000)}


def _next_starts(model, scope: Q, on: dt.date) -> dict[tuple, dt.date]:
    """series -> the first effective date after `on` (a backdated row ends there)."""
    # A row starting after `on` is open on `on` (valid_until >= effective_date): saying so lets
    # the query use the valid_until indexes instead of reading the whole history.
    rows = (
        model.objects.filter(scope, effective_date__gt=on)
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=on))
        .values(*model.SERIES_FIELDS)
        .annotate(first=Min("effective_date"))
        .order_by()
    )
    return {tuple(r[f] for f in model.SERIES_FIELDS): r["first"] for r in rows}


def _lock_prices() -> None:
    """Serialise price writers so two runs never both close the same row (SQLite locks the
    whole database on write already)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [PRICE_LOCK_KEY])


def _join(note: str, more: str) -> str:
    return f"{note} · {more}" if note and more else note or more


def accelerator_matcher() -> AcceleratorMatcher:
    return AcceleratorMatcher(
        [
            CatalogAccelerator(slug, name, memory_gb)
            for slug, name, memory_gb in Accelerator.objects.values_list(
                "slug", "name", "memory_gb"
            )
        ]
    )


def _providers_resolve(parsed: Parsed) -> tuple[dict[str, Provider], list[str]]:
    """Feed name -> Provider, creating the ones not seen before (and saying so in the run)."""
    kinds = {k for k, _ in Provider.KINDS}
    declared: dict[str, dict] = {}
    for name, info in parsed.providers.items():
        declared[name] = dict(info)
    for o in (*parsed.gpu, *parsed.api):
        if o.provider_kind and o.provider not in declared:
            declared[o.provider] = {"kind": o.provider_kind}
    gpu_names = {o.provider for o in parsed.gpu}
    names = gpu_names | {o.provider for o in parsed.api}
    slugs = {name: provider_slug(name) for name in names}
    found = Provider.objects.filter(Q(slug__in=slugs.values()) | Q(name__in=names))
    by_slug = {p.slug: p for p in found}
    by_name = {p.name.lower(): p for p in found}
    result, created = {}, []
    for name, slug in sorted(slugs.items()):
        provider = by_slug.get(slug) or by_name.get(name.lower())
        if provider is None:
            info = declared.get(name, {})
            if slug in KNOWN_PROVIDERS:
                known_name, kind, url, _aliases = KNOWN_PROVIDERS[slug]
            else:
                known_name, url = name, info.get("url", "")
                kind = Provider.CLOUD if name in gpu_names else Provider.API_VENDOR
            if info.get("kind") in kinds:
                kind = info["kind"]
            provider = Provider.objects.create(
                name=known_name[:120], slug=slug, kind=kind, url=(info.get("url") or url)[:300]
            )
            by_slug[slug] = provider
            created.append(provider.name)
        result[name] = provider
    return result, created


# --- hand-entered prices ---------------------------------------------------------------------


@transaction.atomic
def gpu_price_record(
    *, price: GpuPrice, entered_by=None, source: str = ADMIN, corrects: GpuPrice | None = None
) -> GpuPrice:
    """Store one GPU price typed by staff (or posted through the API) as a new dated row.

    A correction is such a row pointing at the one it corrects; the old row stays as history
    and, from the new row's date on, is no longer current.
    """
    _lock_prices()
    fields = {f: getattr(price, f) for f in (*GpuPrice.SERIES_FIELDS, *GpuPrice.VALUE_FIELDS)}
    fields.update(
        source=source,
        source_url=price.source_url,
        note=price.note,
        entered_by=entered_by,
        corrects=corrects or price.corrects,
        created_at=timezone.now(),
    )
    candidate = _Candidate(
        row=1,
        series=tuple(fields[f] for f in GpuPrice.SERIES_FIELDS),
        values=(price.usd_per_gpu_hour,),
        on=price.effective_date,
        fields=fields,
    )
    [stored], _, _ = _store(GpuPrice, [candidate], skip_unchanged=False, returning=True)
    return stored


@transaction.atomic
def api_price_record(
    *, price: ApiPrice, entered_by=None, source: str = ADMIN, corrects: ApiPrice | None = None
) -> ApiPrice:
    _lock_prices()
    values = tuple(getattr(price, f) for f in ApiPrice.VALUE_FIELDS)
    fields = {
        "provider_id": price.provider_id,
        "model_id": price.model_id,
        "llm_id": price.llm_id,
        **dict(zip(ApiPrice.VALUE_FIELDS, values, strict=True)),
        "source": source,
        "source_url": price.source_url,
        "note": price.note,
        "entered_by": entered_by,
        "corrects": corrects or price.corrects,
        "created_at": timezone.now(),
    }
    candidate = _Candidate(
        row=1,
        series=(price.provider_id, price.model_id),
        values=values,
        on=price.effective_date,
        fields=fields,
    )
    [stored], _, _ = _store(ApiPrice, [candidate], skip_unchanged=False, returning=True)
    return stored


# --- repair ----------------------------------------------------------------------------------

_REBUILD_SQL = """
UPDATE {table} SET valid_until = nxt.next_date
FROM (
    SELECT id, LEAD(effective_date) OVER (
        PARTITION BY {series} ORDER BY effective_date, id
    ) AS next_date
    FROM {table}
) AS nxt
WHERE {table}.id = nxt.id AND {table}.valid_until IS DISTINCT FROM nxt.next_date
"""


@transaction.atomic
def price_intervals_rebuild() -> int:
    """Recompute every `valid_until` from the rows themselves; returns the rows changed.

    For rows written outside the services (a bulk load, a restore). Same rule as `_store`: a
    series' rows in (effective_date, id) order, each valid until the next one's date.
    """
    _lock_prices()
    changed = 0
    with connection.cursor() as cursor:
        for model in (GpuPrice, ApiPrice):
            columns = ", ".join(model._meta.get_field(f).column for f in model.SERIES_FIELDS)
            sql = _REBUILD_SQL.format(table=model._meta.db_table, series=columns)
            if connection.vendor == "sqlite":
                sql = sql.replace("IS DISTINCT FROM", "IS NOT")
            cursor.execute(sql)
            changed += cursor.rowcount
    return changed


# --- seed ------------------------------------------------------------------------------------

_SKYPILOT = "https://github.com/skypilot-org/skypilot-catalog/blob/{commit}/catalogs/{path}"
# The shipped samples (shared/data/price-feeds, see its README) as disabled feeds, so a new
# install has prices and staff see a working feed of each format. None of the public files has
# a date column: they are dated the day load_prices reads them, and each row's note says so;
# the LiteLLM snapshot is dated by its known snapshot day.
SEED_FEEDS = [
    {
        "name": "Article assumption and API prices (July 2026)",
        "format": Feed.K3PLANNER_JSON,
        "location": f"{SEED_DIR}/article_2026-07-20.json",
        "note": "The article's assumed $2.50 a GPU-hour (not a quote) and Moonshot's kimi-k3 "
        "prices ($0.30 hit, $3.00 miss, $15.00 output per M), dated 2026-07-20.",
    },
    *(
        {
            "name": f"SkyPilot {label} (sample)",
            "format": Feed.SKYPILOT_CSV,
            "location": f"{SEED_DIR}/skypilot/{file}",
            "provider": provider,
            "source_url": _SKYPILOT.format(commit=commit, path=path),
            "note": f"Excerpt of skypilot-catalog @{commit} {path}; the file has no dates.",
        }
        for label, file, provider, commit, path in (
            ("AWS", "aws_vms_v8_gpu_rows.csv", "aws", "00148f2a", "v8/aws/vms.csv"),
            ("Lambda", "lambda_vms_v8_gpu_rows.csv", "lambda", "0f407038", "v8/lambda/vms.csv"),
            ("Nebius", "nebius_vms_v8_gpu_rows.csv", "nebius", "0082b043", "v8/nebius/vms.csv"),
            ("Verda", "verda_vms_v8_gpu_rows.csv", "verda", "000c1d0b", "v8/verda/vms.csv"),
            (
                "Hyperbolic",
                "hyperbolic_vms_v8.csv",
                "hyperbolic",
                "0082b043",
                "v8/hyperbolic/vms.csv",
            ),
            (
                "Shadeform",
                "shadeform_vms_v8_rows.csv",
                "shadeform",
                "002363da",
                "v8/shadeform/vms.csv",
            ),
            ("DigitalOcean", "do_vms_v6_rows.csv", "do", "1fbe7331", "v6/do/vms.csv"),
        )
    ),
    {
        "name": "gpuhunt Crusoe (sample)",
        "format": Feed.GPUHUNT_CSV,
        "location": f"{SEED_DIR}/gpuhunt/crusoe_gpu_pricing_from_gpuhunt.csv",
        "provider": "crusoe",
        "source_url": "https://github.com/dstackai/gpuhunt/blob/35841515/src/gpuhunt/providers/crusoe.py",
        "note": "gpuhunt's Crusoe price table @35841515 as CSV; B200 is an estimate there.",
    },
    {
        "name": "LiteLLM API prices (2026-08-01 snapshot, sample)",
        "format": Feed.LITELLM_JSON,
        "location": f"{SEED_DIR}/litellm/model_prices_trimmed.json",
        "source_url": "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json",
        "observed_on": dt.date(2026, 8, 1),
        "note": "58 entries of LiteLLM's model_prices_and_context_window.json, 2026-08-01.",
    },
]


def prices_seed(*, today: dt.date | None = None) -> list[FeedRun]:
    """Create the sample feeds (kept as staff left them if present) and run each once.
    Safe to run twice: an unchanged price adds no row."""
    runs = []
    for spec in SEED_FEEDS:
        feed, _ = Feed.objects.get_or_create(name=spec["name"], defaults={**spec, "enabled": False})
        runs.append(feed_refresh(feed=feed, today=today))
    return runs
