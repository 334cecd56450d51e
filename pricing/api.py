"""Prices over JSON: current and historical GPU-hour and API prices; staff add dated rows."""

import datetime as dt
from decimal import Decimal
from typing import Literal

from django.shortcuts import get_object_or_404
from django.utils import timezone
from ninja import Field, Router, Schema, Status
from ninja.errors import HttpError
from ninja.pagination import LimitOffsetPagination, paginate

from k3planner.api import anyone
from pricing import selectors
from pricing.feeds import MAX_USD_PER_GPU_HOUR, MAX_USD_PER_M_TOKENS
from pricing.models import API, ApiPrice, GpuPrice, Provider
from pricing.services import api_price_record, gpu_price_record
from sizing.models import Accelerator, LLMModel
from sizing.schemas import In

router = Router(tags=["prices"])
KINDS = "^(on_demand|spot|reserved)$"
Kind = Literal["on_demand", "spot", "reserved"]


class GpuPriceOut(Schema):
    id: int
    provider: str = Field(..., alias="provider.slug")
    provider_name: str = Field(..., alias="provider.name")
    accelerator: str = Field(..., alias="accelerator.slug")
    kind: str
    term_months: int
    region: str
    gpu_count: int
    offer: str
    usd_per_gpu_hour: Decimal
    effective_date: dt.date
    valid_until: dt.date | None
    source: str
    source_url: str
    note: str
    corrects_id: int | None
    entered_by: str | None
    created_at: dt.datetime

    @staticmethod
    def resolve_entered_by(obj):
        return obj.entered_by.get_username() if obj.entered_by_id else None


class ApiPriceOut(Schema):
    id: int
    provider: str = Field(..., alias="provider.slug")
    provider_name: str = Field(..., alias="provider.name")
    model_id: str
    llm: str | None
    usd_per_m_input_cache_hit: Decimal | None
    usd_per_m_input_cache_miss: Decimal
    usd_per_m_output: Decimal
    context_tokens: int | None
    effective_date: dt.date
    valid_until: dt.date | None
    source: str
    source_url: str
    note: str
    corrects_id: int | None
    created_at: dt.datetime

    @staticmethod
    def resolve_llm(obj):
        return obj.llm.slug if obj.llm_id else None


class GpuPriceIn(In):
    provider: str = Field(..., description="Provider slug")
    accelerator: str = Field(..., description="Accelerator slug")
    kind: str = Field("on_demand", pattern=KINDS)
    term_months: int = Field(0, ge=0, le=120)
    region: str = Field("", max_length=64)
    gpu_count: int = Field(1, ge=1, le=1024)
    offer: str = Field("", max_length=120)
    usd_per_gpu_hour: Decimal = Field(..., gt=0, le=MAX_USD_PER_GPU_HOUR, decimal_places=6)
    effective_date: dt.date | None = Field(None, description="Default: today")
    source_url: str = Field("", max_length=500)
    note: str = Field("", max_length=300)
    corrects: int | None = Field(None, ge=1, description="Id of the row this corrects")


class ApiPriceIn(In):
    provider: str = Field(..., description="Provider slug")
    model_id: str = Field(..., min_length=1, max_length=200)
    llm: str | None = Field(None, description="Catalog model slug, when known")
    usd_per_m_input_cache_hit: Decimal | None = Field(
        None, ge=0, le=MAX_USD_PER_M_TOKENS, decimal_places=6
    )
    usd_per_m_input_cache_miss: Decimal = Field(
        ..., ge=0, le=MAX_USD_PER_M_TOKENS, decimal_places=6
    )
    usd_per_m_output: Decimal = Field(..., ge=0, le=MAX_USD_PER_M_TOKENS, decimal_places=6)
    context_tokens: int | None = Field(None, ge=1, le=2**27)
    effective_date: dt.date | None = None
    source_url: str = Field("", max_length=500)
    note: str = Field("", max_length=300)
    corrects: int | None = Field(None, ge=1)


def _staff(request) -> None:
    if not request.user.is_staff:
        raise HttpError(403, "Only staff may add prices")


def _or_404(model, **lookup):
    return get_object_or_404(model, **lookup)


def _optional(model, slug: str):
    return _or_404(model, slug=slug) if slug else None


@router.get("/prices/gpu", response=list[GpuPriceOut], auth=anyone)
@paginate(LimitOffsetPagination)
def gpu_prices(
    request,
    provider: str = "",
    accelerator: str = "",
    kind: Kind | None = None,
    region: str | None = None,
    as_of: dt.date | None = None,
):
    """Current GPU-hour prices as of a date (default today), cheapest first."""
    return selectors.gpu_prices_current(
        as_of=as_of,
        provider=_optional(Provider, provider),
        accelerator=_optional(Accelerator, accelerator),
        kind=kind,
        region=region,
    )


@router.get("/prices/gpu/history", response=list[GpuPriceOut], auth=anyone)
@paginate(LimitOffsetPagination)
def gpu_price_history(
    request,
    accelerator: str = "",
    provider: str = "",
    kind: Kind | None = None,
    region: str | None = None,
    since: dt.date | None = None,
):
    """Every row, superseded or not, oldest first."""
    return selectors.gpu_price_history(
        accelerator=_optional(Accelerator, accelerator),
        provider=_optional(Provider, provider),
        kind=kind,
        region=region,
        since=since,
    )


@router.post("/prices/gpu", response={201: GpuPriceOut})
def add_gpu_price(request, payload: GpuPriceIn):
    """A new dated GPU-hour price (a correction too: it never edits the old row)."""
    _staff(request)
    data = payload.dict()
    price = GpuPrice(
        provider=_or_404(Provider, slug=data.pop("provider")),
        accelerator=_or_404(Accelerator, slug=data.pop("accelerator")),
        corrects=_or_404(GpuPrice, pk=data.pop("corrects")) if payload.corrects else None,
        effective_date=data.pop("effective_date") or timezone.localdate(),
        **data,
    )
    stored = gpu_price_record(price=price, entered_by=request.user, source=API)
    return Status(201, GpuPrice.objects.select_related("provider", "accelerator").get(pk=stored.pk))


@router.get("/prices/api", response=list[ApiPriceOut], auth=anyone)
@paginate(LimitOffsetPagination)
def api_prices(
    request,
    provider: str = "",
    model_id: str | None = None,
    llm: str = "",
    as_of: dt.date | None = None,
):
    """Current API prices per million tokens as of a date (default today), cheapest output first."""
    return selectors.api_prices_current(
        as_of=as_of,
        provider=_optional(Provider, provider),
        model_id=model_id,
        llm=_optional(LLMModel, llm),
    )


@router.get("/prices/api/history", response=list[ApiPriceOut], auth=anyone)
@paginate(LimitOffsetPagination)
def api_price_history(request, provider: str, model_id: str):
    return selectors.api_price_history(provider=_or_404(Provider, slug=provider), model_id=model_id)


@router.post("/prices/api", response={201: ApiPriceOut})
def add_api_price(request, payload: ApiPriceIn):
    _staff(request)
    data = payload.dict()
    price = ApiPrice(
        provider=_or_404(Provider, slug=data.pop("provider")),
        llm=_optional(LLMModel, data.pop("llm") or ""),
        corrects=_or_404(ApiPrice, pk=data.pop("corrects")) if payload.corrects else None,
        effective_date=data.pop("effective_date") or timezone.localdate(),
        **data,
    )
    stored = api_price_record(price=price, entered_by=request.user, source=API)
    return Status(201, ApiPrice.objects.select_related("provider", "llm").get(pk=stored.pk))
