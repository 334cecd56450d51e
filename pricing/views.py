import datetime as dt

from django.conf import settings
from django.core.cache import cache
from django.core.paginator import Paginator
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe

from pricing import charts, feeds, selectors
from pricing.models import ON_DEMAND, GpuPrice, Provider
from sizing.models import Accelerator

HISTORY_DAYS = 365  # the charts' window
STALE_DAYS = 30  # an older price is flagged: public prices move weekly
# All accelerators at once: each one's cheapest few offers, and a link to all of them. One
# accelerator: its offers a page at a time. A feed of a few thousand regions stays a quick page.
OFFERS_PER_ACCELERATOR = 10
OFFERS_PER_PAGE = 50


def prices(request):
    """Current prices per accelerator, cheapest on-demand offer highlighted, with history.

    The page's three tables are rendered once per version of the prices (the newest price
    rows' ids), day and filter, and kept PRICES_CACHE_SECONDS: a new price shows at once, and
    the page costs two index lookups until it does.
    """
    today = timezone.localdate()
    accelerator = Accelerator.objects.filter(slug=request.GET.get("accelerator") or "").first()
    kind = request.GET.get("kind") or None
    if kind not in dict(GpuPrice.KINDS):
        kind = None
    page_number = request.GET.get("page", "")[:12]
    key = ":".join(
        str(part)
        for part in (
            "prices-page",
            *selectors.prices_version(),
            today,
            accelerator.slug if accelerator else "",
            kind or "",
            page_number,
        )
    )
    tables = cache.get(key)
    if tables is None:
        context = _tables_context(today=today, accelerator=accelerator, kind=kind, page=page_number)
        tables = {
            name: render_to_string(f"pricing/prices.html#{name}", context)
            for name in ("cheapest", "offers", "api-prices")
        }
        cache.set(key, tables, settings.PRICES_CACHE_SECONDS)
    if request.htmx:
        return HttpResponse(tables["offers"])
    context = {
        "today": today,
        "tables": {name.replace("-", "_"): mark_safe(html) for name, html in tables.items()},
        "accelerators": Accelerator.objects.all(),
        "selected_accelerator": accelerator,
        "kinds": GpuPrice.KINDS,
        "selected_kind": kind,
        "stale_days": STALE_DAYS,
    }
    return render(request, "pricing/prices.html", context)


def _tables_context(*, today: dt.date, accelerator, kind: str | None, page: str) -> dict:
    cheapest = selectors.gpu_cheapest_offers(as_of=today)
    cheapest_ids = {p.pk for p in cheapest}
    offers_page = None
    if accelerator is None:
        offers = selectors.gpu_offers_cheapest_of_each(
            partition=("accelerator_id",), limit=OFFERS_PER_ACCELERATOR, as_of=today, kind=kind
        )
        counts = {o.accelerator_id: o.offers_in_group for o in offers}
    else:
        current = selectors.gpu_prices_current(as_of=today, accelerator=accelerator, kind=kind)
        offers_page = Paginator(current, OFFERS_PER_PAGE).get_page(page)
        offers = list(offers_page.object_list)
        counts = {accelerator.pk: offers_page.paginator.count}
    lines = selectors.gpu_price_lines(
        accelerator_ids={o.accelerator_id for o in offers},
        kind=ON_DEMAND,
        since=today - dt.timedelta(days=HISTORY_DAYS),
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
                "count": counts.get(acc.pk, 0),
                "chart_id": f"price-history-{acc.slug}",
                "chart": charts.price_history_figure(
                    title=f"{acc.name}: cheapest on-demand offer per provider",
                    rows=lines.get(acc.pk, []),
                    today=today,
                ),
            }
        groups[acc.pk]["offers"].append(offer)
    for p in cheapest:
        p.age_days = (today - p.effective_date).days
    return {
        "today": today,
        "cheapest": cheapest,
        "groups": sorted(
            groups.values(), key=lambda g: (-g["accelerator"].memory_gb, g["accelerator"].name)
        ),
        "page": offers_page,
        "selected_accelerator": accelerator,
        "selected_kind": kind,
        "api_prices": selectors.api_prices_current(as_of=today),
    }


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
