import datetime as dt
from collections import defaultdict

from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.utils import timezone

from pricing import charts, feeds, selectors
from pricing.models import ON_DEMAND, GpuPrice, Provider
from sizing.models import Accelerator

HISTORY_DAYS = 365  # the charts' window
STALE_DAYS = 30  # an older price is flagged: public prices move weekly
# Past this many current offers the page asks for an accelerator before listing them all.
MAX_OFFERS_UNFILTERED = 500


def prices(request):
    """Current prices per accelerator, cheapest on-demand offer highlighted, with history."""
    today = timezone.localdate()
    accelerator = Accelerator.objects.filter(slug=request.GET.get("accelerator") or "").first()
    kind = request.GET.get("kind") or None
    if kind not in dict(GpuPrice.KINDS):
        kind = None
    cheapest = selectors.gpu_cheapest_offers(as_of=today)
    cheapest_ids = {p.pk for p in cheapest}
    offers = list(
        selectors.gpu_prices_current(as_of=today, accelerator=accelerator, kind=kind)[
            : MAX_OFFERS_UNFILTERED + 1
        ]
    )
    too_many = accelerator is None and len(offers) > MAX_OFFERS_UNFILTERED
    if too_many:
        offers = []
    history = (
        selectors.gpu_price_history(
            accelerator=accelerator, kind=ON_DEMAND, since=today - dt.timedelta(days=HISTORY_DAYS)
        )
        if offers
        else []
    )
    rows_by_accelerator = defaultdict(list)
    for row in history:
        rows_by_accelerator[row.accelerator_id].append(
            (row.provider.name, row.effective_date, row.valid_until, row.usd_per_gpu_hour)
        )
    groups = {}
    for offer in offers:
        offer.age_days = (today - offer.effective_date).days
        offer.is_stale = offer.age_days > STALE_DAYS
        offer.is_cheapest = offer.pk in cheapest_ids
        acc = offer.accelerator
        if acc.pk not in groups:
            groups[acc.pk] = {
                "accelerator": acc,
                "offers": [],
                "chart_id": f"price-history-{acc.slug}",
                "chart": charts.price_history_figure(
                    title=f"{acc.name}: cheapest on-demand offer per provider",
                    rows=rows_by_accelerator.get(acc.pk, []),
                    today=today,
                ),
            }
        groups[acc.pk]["offers"].append(offer)
    for p in cheapest:
        p.age_days = (today - p.effective_date).days
    context = {
        "today": today,
        "cheapest": cheapest,
        "groups": sorted(
            groups.values(), key=lambda g: (-g["accelerator"].memory_gb, g["accelerator"].name)
        ),
        "accelerators": Accelerator.objects.all(),
        "selected_accelerator": accelerator,
        "kinds": GpuPrice.KINDS,
        "selected_kind": kind,
        "api_prices": selectors.api_prices_current(as_of=today),
        "stale_days": STALE_DAYS,
        "too_many": too_many,
        "max_offers": MAX_OFFERS_UNFILTERED,
    }
    template = "pricing/prices.html#offers" if request.htmx else "pricing/prices.html"
    return render(request, template, context)


def _as_of(request) -> dt.date | None:
    value = request.GET.get("as_of")
    if not value:
        return timezone.localdate()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def _gpu_rows(as_of: dt.date) -> list[dict]:
    return [
        {
            "provider": p.provider.name,
            "accelerator": p.accelerator.slug,
            "usd_per_gpu_hour": p.usd_per_gpu_hour,
            "kind": p.kind,
            "term_months": p.term_months,
            "region": p.region,
            "zone": p.zone,
            "gpu_count": p.gpu_count,
            "offer": p.offer,
            "effective_date": p.effective_date.isoformat(),
            "source_url": p.source_url,
            "note": p.note,
            "provider_kind": p.provider.kind,
        }
        for p in selectors.gpu_prices_current(as_of=as_of)
    ]


def _api_rows(as_of: dt.date) -> list[dict]:
    return [
        {
            "provider": p.provider.name,
            "model_id": p.model_id,
            "usd_per_m_output": p.usd_per_m_output,
            "usd_per_m_input_cache_miss": p.usd_per_m_input_cache_miss,
            "usd_per_m_input_cache_hit": p.usd_per_m_input_cache_hit,
            "context_tokens": p.context_tokens,
            "effective_date": p.effective_date.isoformat(),
            "source_url": p.source_url,
            "note": p.note,
            "provider_kind": p.provider.kind,
        }
        for p in selectors.api_prices_current(as_of=as_of)
    ]


def _download(body: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def export_gpu_csv(request):
    """Current GPU prices in k3planner's CSV: what a feed or the admin import reads back."""
    as_of = _as_of(request)
    if as_of is None:
        return HttpResponseBadRequest("as_of must be a date, YYYY-MM-DD")
    body = feeds.write_k3planner_gpu_csv(_gpu_rows(as_of))
    return _download(body, "text/csv; charset=utf-8", f"k3planner-gpu-prices-{as_of}.csv")


def export_api_csv(request):
    as_of = _as_of(request)
    if as_of is None:
        return HttpResponseBadRequest("as_of must be a date, YYYY-MM-DD")
    body = feeds.write_k3planner_api_csv(_api_rows(as_of))
    return _download(body, "text/csv; charset=utf-8", f"k3planner-api-prices-{as_of}.csv")


def export_json(request):
    as_of = _as_of(request)
    if as_of is None:
        return HttpResponseBadRequest("as_of must be a date, YYYY-MM-DD")
    gpu, api = _gpu_rows(as_of), _api_rows(as_of)
    names = {r["provider"] for r in gpu} | {r["provider"] for r in api}
    providers = [
        {"name": p.name, "kind": p.kind, "url": p.url}
        for p in Provider.objects.filter(name__in=names)
    ]
    body = feeds.write_k3planner_json(gpu_rows=gpu, api_rows=api, providers=providers)
    return _download(body, "application/json", f"k3planner-prices-{as_of}.json")
