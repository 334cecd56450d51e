"""Endpoints and their probe history over JSON, for members of the endpoint's team.

Keys are never returned: only whether one is set and, for an environment variable, its name.
"""

import datetime as dt
from typing import Literal

from django.http import Http404
from django.utils import timezone
from ninja import Field, Router, Schema
from ninja.pagination import LimitOffsetPagination, paginate

from probes import selectors
from probes.models import Endpoint, ProbeResult

router = Router(tags=["probes"])


class EndpointOut(Schema):
    id: int
    name: str
    team: str = Field(..., alias="team.slug")
    base_url: str
    kind: str
    model_id: str
    llm: str | None
    accelerator: str | None
    gpu_count: int | None
    status: str
    status_since: dt.datetime | None
    last_probed_at: dt.datetime | None
    has_key: bool
    key_env_var: str
    interval_s: int
    enabled: bool
    uptime_24h: float | None
    uptime_7d: float | None

    @staticmethod
    def resolve_llm(obj):
        return obj.llm.slug if obj.llm_id else None

    @staticmethod
    def resolve_accelerator(obj):
        return obj.accelerator.slug if obj.accelerator_id else None

    @staticmethod
    def resolve_has_key(obj):
        return bool(obj.key_env_var or obj.key_encrypted)

    @staticmethod
    def resolve_uptime_24h(obj):
        return selectors.uptime(obj.up_24h, obj.probes_24h)

    @staticmethod
    def resolve_uptime_7d(obj):
        return selectors.uptime(obj.up_7d, obj.probes_7d)


class ProbeResultOut(Schema):
    id: int
    kind: str
    started_at: dt.datetime
    status: str
    http_status: int | None
    health_http_status: int | None
    latency_ms: float | None
    models_listed: list
    error: str
    concurrency: int | None
    ttft_ms: float | None
    tokens_per_s: float | None
    tokens_per_s_per_stream: float | None
    total_ms: float | None
    prompt_tokens: int | None
    output_tokens: int | None
    estimated_tokens_per_s: float | None
    estimate_basis: str


def _endpoint(request, endpoint_id: int) -> Endpoint:
    try:
        return selectors.endpoint_for(request.user, endpoint_id)
    except Endpoint.DoesNotExist:
        raise Http404("No such endpoint") from None


@router.get("/endpoints", response=list[EndpointOut])
@paginate(LimitOffsetPagination)
def list_endpoints(request):
    """The endpoints of your teams, with their current status and uptime."""
    return selectors.endpoints_for(request.user)


@router.get("/endpoints/{int:endpoint_id}", response=EndpointOut)
def get_endpoint(request, endpoint_id: int):
    return _endpoint(request, endpoint_id)


@router.get("/endpoints/{int:endpoint_id}/results", response=list[ProbeResultOut])
@paginate(LimitOffsetPagination)
def endpoint_results(
    request,
    endpoint_id: int,
    kind: Literal["health", "speed"] = "health",
    days: int = 7,
):
    """Probe history, newest first."""
    endpoint = _endpoint(request, endpoint_id)
    since = timezone.now() - dt.timedelta(days=min(max(days, 1), 90))
    return ProbeResult.objects.filter(endpoint=endpoint, kind=kind, started_at__gte=since).order_by(
        "-started_at", "-id"
    )
