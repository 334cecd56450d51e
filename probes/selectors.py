"""Endpoint queries (scoped to the user's teams), uptime, history, estimates and calibration."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from probes import probe
from probes.models import Endpoint, ProbeResult, StatusEvent
from sizing.engine import Assumptions, SpeedEstimate, Workload, decode_speed
from sizing.selectors import accelerator_spec, llm_models, model_spec

# The speed probe's context: a one-line prompt and a short answer. The KV read is negligible at
# this length, so the estimate it is compared with is (nearly) the weights-bound one.
SPEED_CONTEXT_TOKENS = 128


def endpoints_for(user) -> QuerySet[Endpoint]:
    """The endpoints of the user's teams, with uptime over 24 h and 7 d, in one query."""
    now = timezone.now()
    day, week = now - timedelta(hours=24), now - timedelta(days=7)
    health = Q(results__kind=ProbeResult.HEALTH)
    up = health & Q(results__status=probe.UP)
    return (
        Endpoint.objects.filter(team__members=user)
        .select_related("team", "llm", "accelerator", "api_price__provider")
        .annotate(
            probes_24h=Count("results", filter=health & Q(results__started_at__gte=day)),
            up_24h=Count("results", filter=up & Q(results__started_at__gte=day)),
            probes_7d=Count("results", filter=health & Q(results__started_at__gte=week)),
            up_7d=Count("results", filter=up & Q(results__started_at__gte=week)),
        )
        .order_by("team__name", "name")
    )


def uptime(up: int, total: int) -> float | None:
    """Share of health probes that found the endpoint up; None with no probes."""
    return up / total if total else None


def endpoint_for(user, pk: int) -> Endpoint:
    """The endpoint if the user is on its team; Endpoint.DoesNotExist otherwise."""
    return endpoints_for(user).get(pk=pk)


def recent_events(user, *, limit: int = 50) -> QuerySet[StatusEvent]:
    return StatusEvent.objects.filter(endpoint__team__members=user).select_related(
        "endpoint", "endpoint__team"
    )[:limit]


def history(endpoint: Endpoint, *, kind: str, since: datetime) -> list[ProbeResult]:
    """An endpoint's results of one kind since a time, oldest first (for the charts)."""
    return list(
        endpoint.results.filter(kind=kind, started_at__gte=since).order_by("started_at", "id")
    )


def due_for_health(now: datetime, *, sweep_s: int) -> QuerySet[Endpoint]:
    """Enabled endpoints whose next probe falls before the next sweep.

    A probe is due up to `sweep_s` early, so with a sweep every `sweep_s` seconds no two probes
    are more than one interval apart: a server that stops is marked down within one interval
    (plus the probe's own timeout).
    """
    soon = now + timedelta(seconds=sweep_s)
    return Endpoint.objects.filter(enabled=True).filter(
        Q(next_probe_at__isnull=True) | Q(next_probe_at__lt=soon)
    )


def due_for_speed(now: datetime, *, sweep_s: int) -> QuerySet[Endpoint]:
    soon = now + timedelta(seconds=sweep_s)
    return Endpoint.objects.filter(enabled=True, speed_interval_s__gt=0, status=probe.UP).filter(
        Q(next_speed_at__isnull=True) | Q(next_speed_at__lt=soon)
    )


def speed_estimate(
    endpoint: Endpoint, *, batch: int | None = None, context_tokens: int = SPEED_CONTEXT_TOKENS
) -> SpeedEstimate | None:
    """The engine's decode speed for the endpoint's model on its hardware at the probe's batch.

    None when the endpoint does not say what it runs on (a hosted API, or fields left empty).
    """
    if endpoint.llm_id is None or endpoint.accelerator_id is None:
        return None
    llm = llm_models().get(pk=endpoint.llm_id)
    workload = Workload(
        context_tokens=context_tokens, concurrency=batch or endpoint.speed_concurrency
    )
    return decode_speed(
        model_spec(llm), accelerator_spec(endpoint.accelerator), endpoint.gpu_count, workload
    )


def estimate_basis(endpoint: Endpoint, batch: int) -> str:
    return (
        f"{endpoint.llm} on {endpoint.gpu_count} × {endpoint.accelerator}, batch {batch}, "
        f"{SPEED_CONTEXT_TOKENS} tokens of context, default efficiencies"
    )


@dataclass(frozen=True)
class Calibration:
    """Measured ÷ estimated decode tokens/s from one speed probe, as a scenario applies it."""

    factor: float
    measured_tokens_per_s: float
    estimated_tokens_per_s: float
    endpoint_id: int
    endpoint_name: str
    measured_at: datetime
    basis: str
    result_id: int

    @property
    def label(self) -> str:
        return f"calibrated from endpoint {self.endpoint_name} on {self.measured_at:%Y-%m-%d}"


def _calibration(result: ProbeResult) -> Calibration:
    return Calibration(
        factor=result.calibration_factor,
        measured_tokens_per_s=result.tokens_per_s,
        estimated_tokens_per_s=result.estimated_tokens_per_s,
        endpoint_id=result.endpoint_id,
        endpoint_name=result.endpoint.name,
        measured_at=result.started_at,
        basis=result.estimate_basis,
        result_id=result.pk,
    )


def _calibrated_results() -> QuerySet[ProbeResult]:
    return ProbeResult.objects.filter(
        kind=ProbeResult.SPEED,
        status=probe.UP,
        tokens_per_s__gt=0,
        estimated_tokens_per_s__gt=0,
    ).select_related("endpoint")


def calibration_results(user) -> QuerySet[ProbeResult]:
    """Speed probes of the user's teams' endpoints that can calibrate a scenario, newest first."""
    return _calibrated_results().filter(endpoint__team__members=user).order_by("-started_at", "-id")


def calibration_of(result: ProbeResult) -> Calibration:
    return _calibration(result)


def latest_calibration(endpoint: Endpoint) -> Calibration | None:
    result = _calibrated_results().filter(endpoint=endpoint).first()
    return _calibration(result) if result else None


def calibrations(user, *, llm=None, accelerator=None) -> list[Calibration]:
    """The newest calibration of each of the user's endpoints, optionally for a model/card."""
    results = _calibrated_results().filter(endpoint__team__members=user)
    if llm is not None:
        results = results.filter(endpoint__llm=llm)
    if accelerator is not None:
        results = results.filter(endpoint__accelerator=accelerator)
    newest: dict[int, Calibration] = {}
    for result in results.order_by("-started_at", "-id")[:500]:
        newest.setdefault(result.endpoint_id, _calibration(result))
    return list(newest.values())


def calibrated_assumptions(assumptions: Assumptions, factor: float) -> Assumptions:
    """The assumptions scaled so the engine's decode tokens/s come out `factor` times larger.

    Step time is bytes ÷ (bandwidth × efficiency) or FLOPs ÷ (peak × efficiency), so scaling
    both efficiencies by the factor scales tokens/s by exactly the factor, whichever bound.
    """
    if factor <= 0:
        raise ValueError("a calibration factor must be positive")
    return dataclasses.replace(
        assumptions,
        bandwidth_efficiency=assumptions.bandwidth_efficiency * factor,
        compute_efficiency=assumptions.compute_efficiency * factor,
    )
