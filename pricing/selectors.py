"""Price queries. Each is one SQL query, whatever the number of rows.

"Current as of D" is the row of each series with effective_date <= D < valid_until (or no
valid_until yet); services keep that true for exactly one row a series on any date. Dates
default to today.
"""

import datetime as dt

from django.db.models import Count, F, Min, OuterRef, Q, QuerySet, Subquery, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from pricing.models import ON_DEMAND, ApiPrice, FeedRun, GpuPrice, Provider
from sizing.models import Accelerator


def current_on(as_of: dt.date) -> Q:
    return Q(effective_date__lte=as_of) & (Q(valid_until__isnull=True) | Q(valid_until__gt=as_of))


def gpu_prices_current(
    *,
    as_of: dt.date | None = None,
    provider=None,
    accelerator=None,
    kind: str | None = None,
    region: str | None = None,
) -> QuerySet[GpuPrice]:
    """The current GPU-hour prices, cheapest first; filter to one (provider, accelerator, kind,
    region) for that key's offers (a provider may sell several instance shapes there)."""
    qs = GpuPrice.objects.filter(current_on(as_of or timezone.localdate()))
    if provider is not None:
        qs = qs.filter(provider=provider)
    if accelerator is not None:
        qs = qs.filter(accelerator=accelerator)
    # Every kind spelled out lets PostgreSQL walk the (accelerator, kind, valid_until) index
    # once per kind instead of reading all of an accelerator's history.
    qs = qs.filter(kind__in=[kind] if kind is not None else [k for k, _ in GpuPrice.KINDS])
    if region is not None:
        qs = qs.filter(region=region)
    return qs.select_related("provider", "accelerator").order_by("usd_per_gpu_hour", "id")


def gpu_price_current(
    *, provider, accelerator, kind: str = ON_DEMAND, region: str = "", as_of: dt.date | None = None
) -> GpuPrice | None:
    """The cheapest current offer for one (provider, accelerator, kind, region), or None."""
    return gpu_prices_current(
        as_of=as_of, provider=provider, accelerator=accelerator, kind=kind, region=region
    ).first()


def gpu_cheapest_offers(
    *, as_of: dt.date | None = None, kind: str = ON_DEMAND, include_assumptions: bool = False
) -> list[GpuPrice]:
    """One row per accelerator: its cheapest current offer of this kind, any provider. An
    assumed rate (the article's $2.50) is not an offer unless asked for.

    A current row either has no valid_until yet (today's prices: the first entry of the
    gpuprice_open_by_price index) or one after `as_of` (superseded since). The query takes the
    cheapest of each branch for every catalog accelerator with a LIMIT 1 subquery, so it reads a
    few index entries per accelerator instead of every current row; the lower of the two is
    picked here. A newest-per-group scan (DISTINCT ON) took 200-300 ms at 1,000,000 rows.
    """
    as_of = as_of or timezone.localdate()

    def cheapest(branch: Q) -> QuerySet:
        rows = GpuPrice.objects.filter(branch, accelerator=OuterRef("pk"), kind=kind)
        if not include_assumptions:
            # NOT IN (a subquery), not a join: the plan stays an index-only scan.
            assumed = Provider.objects.filter(kind=Provider.ASSUMPTION).values("pk")
            rows = rows.filter(~Q(provider_id__in=assumed))
        best = (
            rows.filter(effective_date__lte=as_of)
            .order_by("usd_per_gpu_hour", "id")
            .values("pk")[:1]
        )
        return Accelerator.objects.order_by().annotate(best=Subquery(best)).values("best")

    ids = cheapest(Q(valid_until__isnull=True)).union(cheapest(Q(valid_until__gt=as_of)), all=True)
    best: dict[int, GpuPrice] = {}
    for row in GpuPrice.objects.filter(pk__in=ids).select_related("provider", "accelerator"):
        held = best.get(row.accelerator_id)
        if held is None or (row.usd_per_gpu_hour, row.pk) < (held.usd_per_gpu_hour, held.pk):
            best[row.accelerator_id] = row
    return sorted(best.values(), key=lambda r: (r.accelerator.name, r.pk))


def prices_version() -> tuple[int, int]:
    """(newest GPU price id, newest API price id): a price is never edited in place, so any
    new, superseding or correcting price changes this. Two primary-key index lookups."""
    gpu = GpuPrice.objects.order_by("-id").values_list("id", flat=True).first() or 0
    api = ApiPrice.objects.order_by("-id").values_list("id", flat=True).first() or 0
    return gpu, api


def gpu_offers_cheapest_of_each(
    *,
    partition: tuple[str, ...],
    limit: int,
    as_of: dt.date | None = None,
    accelerator=None,
    kind: str | None = None,
) -> list[GpuPrice]:
    """The `limit` cheapest current offers of each `partition` group (say each accelerator, or
    each provider and kind), cheapest first, ranked by a window function. Each row carries
    `offers_in_group`: how many current offers its group has, counted in the same scan."""
    group = [F(name) for name in partition]
    rank = Window(
        RowNumber(), partition_by=group, order_by=[F("usd_per_gpu_hour").asc(), F("id").asc()]
    )
    current = gpu_prices_current(as_of=as_of, accelerator=accelerator, kind=kind)
    # Rank bare ids (no joins, no wide rows), then read the few rows that made it: two
    # queries, as one the planner joined every current row before ranking.
    ranked = current.select_related(None).annotate(
        rank=rank, group_size=Window(Count("id"), partition_by=group)
    )
    sizes = dict(ranked.filter(rank__lte=limit).values_list("pk", "group_size"))
    rows = list(current.filter(pk__in=list(sizes)))
    for row in rows:
        row.offers_in_group = sizes[row.pk]
    return rows


def gpu_price_lines(
    *, accelerator_ids, kind: str = ON_DEMAND, since: dt.date
) -> dict[int, list[tuple[str, dt.date, dt.date | None, float]]]:
    """accelerator id -> (provider, effective_date, valid_until, lowest price) rows since a
    date, what a history chart draws: offers that start and end together collapse into their
    cheapest, so a provider with hundreds of regions is a few rows, not hundreds."""
    rows = (
        GpuPrice.objects.filter(accelerator_id__in=accelerator_ids, kind=kind)
        .filter(effective_date__gte=since)
        .values_list("accelerator_id", "provider__name", "effective_date", "valid_until")
        .annotate(usd=Min("usd_per_gpu_hour"))
        .order_by()
    )
    lines: dict[int, list] = {}
    for accelerator_id, provider, start, end, usd in rows:
        lines.setdefault(accelerator_id, []).append((provider, start, end, usd))
    return lines


def gpu_price_history(
    *,
    accelerator=None,
    provider=None,
    kind: str | None = None,
    region: str | None = None,
    since: dt.date | None = None,
) -> QuerySet[GpuPrice]:
    """Every row, superseded or not, oldest first: a series' history, or an accelerator's."""
    qs = GpuPrice.objects.all()
    if accelerator is not None:
        qs = qs.filter(accelerator=accelerator)
    if provider is not None:
        qs = qs.filter(provider=provider)
    if kind is not None:
        qs = qs.filter(kind=kind)
    if region is not None:
        qs = qs.filter(region=region)
    if since is not None:
        qs = qs.filter(effective_date__gte=since)
    return qs.select_related("provider", "accelerator", "entered_by").order_by(
        "effective_date", "id"
    )


def api_prices_current(
    *,
    as_of: dt.date | None = None,
    provider=None,
    model_id: str | None = None,
    llm=None,
) -> QuerySet[ApiPrice]:
    """Current API prices, cheapest output first; with provider and model_id, that one price."""
    qs = ApiPrice.objects.filter(current_on(as_of or timezone.localdate()))
    if provider is not None:
        qs = qs.filter(provider=provider)
    if model_id is not None:
        qs = qs.filter(model_id=model_id)
    if llm is not None:
        qs = qs.filter(llm=llm)
    return qs.select_related("provider", "llm").order_by("usd_per_m_output", "id")


def api_price_current(*, provider, model_id: str, as_of: dt.date | None = None) -> ApiPrice | None:
    return api_prices_current(as_of=as_of, provider=provider, model_id=model_id).first()


def api_price_history(*, provider, model_id: str) -> QuerySet[ApiPrice]:
    return (
        ApiPrice.objects.filter(provider=provider, model_id=model_id)
        .select_related("provider", "entered_by")
        .order_by("effective_date", "id")
    )


def feed_runs(*, feed=None) -> QuerySet[FeedRun]:
    qs = FeedRun.objects.select_related("feed", "triggered_by")
    return qs.filter(feed=feed) if feed is not None else qs
