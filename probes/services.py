"""Probing endpoints and recording what was found: results, status changes, webhooks.

The network calls (probes.probe) run outside any transaction; each endpoint's result is then
recorded in its own short transaction, so a slow endpoint never holds a lock or a connection.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from probes import keys, probe, selectors
from probes.models import UNKNOWN, Endpoint, ProbeResult, StatusEvent
from sizing.engine import SizingError

logger = logging.getLogger(__name__)

WEBHOOK_TIMEOUT_S = 5.0


@transaction.atomic
def endpoint_save(
    *, endpoint: Endpoint, api_key: str = "", clear_key: bool = False, user=None
) -> Endpoint:
    """Save an endpoint from the form. A new key is encrypted and replaces the stored one; an
    environment variable name and a stored key exclude each other. The next sweep probes it."""
    if api_key:
        endpoint.key_encrypted = keys.encrypt(api_key)
        endpoint.key_env_var = ""
    elif clear_key or endpoint.key_env_var:
        endpoint.key_encrypted = ""
    endpoint.next_probe_at = None
    endpoint.next_speed_at = None
    endpoint.full_clean()
    endpoint.save()
    logger.info("endpoint %s saved by %s (key: %s)", endpoint.pk, user, endpoint.key_source)
    return endpoint


def _target(endpoint: Endpoint) -> tuple[probe.Target, str]:
    """The probe target for an endpoint, and a note when its key could not be read."""
    key, note = None, ""
    try:
        if endpoint.key_encrypted:
            key = keys.decrypt(endpoint.key_encrypted)
        elif endpoint.key_env_var:
            key = keys.from_env(endpoint.key_env_var)
    except (keys.KeyUnreadable, ValueError) as exc:
        note = f" (probed without a key: {exc})"
    target = probe.Target(
        base_url=endpoint.base_url,
        kind=endpoint.kind,
        model_id=endpoint.model_id,
        api_key=key,
        timeout_s=endpoint.timeout_s,
        ref=endpoint.pk,
    )
    return target, note


def endpoints_probe(
    *, endpoints: Iterable[Endpoint], started_at: datetime | None = None
) -> list[ProbeResult]:
    """Health-probe the endpoints concurrently, then record each result."""
    endpoints = list(endpoints)
    started_at = started_at or timezone.now()
    prepared = [_target(e) for e in endpoints]
    found = probe.probe_many(
        [target for target, _ in prepared], concurrency=settings.PROBES_CONCURRENCY
    )
    return [
        probe_record(endpoint_id=endpoint.pk, found=result, started_at=started_at, note=note)
        for endpoint, (_, note), result in zip(endpoints, prepared, found, strict=True)
    ]


@transaction.atomic
def probe_record(
    *, endpoint_id: int, found: probe.HealthResult, started_at: datetime, note: str = ""
) -> ProbeResult:
    """Store a health result; on a change of status, record an event and queue its webhook."""
    # Locked, so two overlapping sweeps cannot both record the same change.
    endpoint = Endpoint.objects.select_for_update().get(pk=endpoint_id)
    result = ProbeResult.objects.create(
        endpoint=endpoint,
        kind=ProbeResult.HEALTH,
        started_at=started_at,
        status=found.status,
        http_status=found.http_status,
        health_http_status=found.health_http_status,
        latency_ms=found.latency_ms,
        models_listed=list(found.models),
        error=(found.error + note).strip(),
    )
    previous = endpoint.status
    endpoint.last_probed_at = started_at
    endpoint.next_probe_at = started_at + timedelta(seconds=endpoint.interval_s)
    fields = ["last_probed_at", "next_probe_at"]
    if found.status != previous:
        endpoint.status, endpoint.status_since = found.status, started_at
        fields += ["status", "status_since"]
        event = StatusEvent.objects.create(
            endpoint=endpoint,
            created_at=started_at,
            from_status=previous,
            to_status=found.status,
            error=result.error,
            result=result,
        )
        from probes.tasks import deliver_event

        transaction.on_commit(lambda: deliver_event.delay(event.pk))
    endpoint.save(update_fields=fields)
    return result


def endpoint_probe_speed(*, endpoint: Endpoint, concurrency: int | None = None) -> ProbeResult:
    """Stream short completions, record the measured speed next to the engine's estimate."""
    concurrency = concurrency or endpoint.speed_concurrency
    target, note = _target(endpoint)
    started_at = timezone.now()
    found = probe.probe_speed(target, concurrency=concurrency, max_tokens=endpoint.speed_max_tokens)
    estimated, basis = None, ""
    try:
        estimate = selectors.speed_estimate(endpoint, batch=concurrency)
    except SizingError as exc:
        estimate, basis = None, f"no estimate: {exc}"
    if estimate is not None:
        basis = selectors.estimate_basis(endpoint, concurrency)
        if estimate.known:
            estimated = estimate.tokens_per_s
        else:
            basis = f"no estimate: unknown {', '.join(estimate.missing)}"
    return speed_record(
        endpoint_id=endpoint.pk,
        found=found,
        started_at=started_at,
        estimated_tokens_per_s=estimated,
        estimate_basis=basis,
        note=note,
    )


@transaction.atomic
def speed_record(
    *,
    endpoint_id: int,
    found: probe.SpeedResult,
    started_at: datetime,
    estimated_tokens_per_s: float | None = None,
    estimate_basis: str = "",
    note: str = "",
) -> ProbeResult:
    endpoint = Endpoint.objects.select_for_update().get(pk=endpoint_id)
    result = ProbeResult.objects.create(
        endpoint=endpoint,
        kind=ProbeResult.SPEED,
        started_at=started_at,
        status=found.status,
        http_status=found.http_status,
        error=(found.error + note).strip(),
        concurrency=found.concurrency,
        ttft_ms=found.ttft_ms,
        tokens_per_s=found.tokens_per_s,
        tokens_per_s_per_stream=found.tokens_per_s_per_stream,
        total_ms=found.total_ms,
        prompt_tokens=found.prompt_tokens,
        output_tokens=found.output_tokens,
        estimated_tokens_per_s=estimated_tokens_per_s,
        estimate_basis=estimate_basis[:300],
    )
    endpoint.last_speed_at = started_at
    if endpoint.speed_interval_s:
        endpoint.next_speed_at = started_at + timedelta(seconds=endpoint.speed_interval_s)
    endpoint.save(update_fields=["last_speed_at", "next_speed_at"])
    return result


@dataclass(frozen=True)
class SweepReport:
    probed: int
    seconds: float
    results: Sequence[ProbeResult]


def endpoints_probe_due(*, now: datetime | None = None) -> SweepReport:
    """The scheduled sweep: claim the endpoints that are due, probe them all at once."""
    now = now or timezone.now()
    claimed = _claim(selectors.due_for_health(now, sweep_s=settings.PROBES_SWEEP_S), now)
    results = endpoints_probe(endpoints=claimed, started_at=now)
    return SweepReport(len(results), (timezone.now() - now).total_seconds(), results)


def endpoints_probe_speed_due(*, now: datetime | None = None) -> list[ProbeResult]:
    """The slower sweep: one speed probe per due endpoint that is up, one after another
    (concurrent speed probes on a shared GPU would measure each other)."""
    now = now or timezone.now()
    due = selectors.due_for_speed(now, sweep_s=settings.PROBES_SPEED_SWEEP_S)
    with transaction.atomic():
        endpoints = list(due.select_for_update(skip_locked=True))
        for endpoint in endpoints:
            endpoint.next_speed_at = now + timedelta(seconds=endpoint.speed_interval_s)
        Endpoint.objects.bulk_update(endpoints, ["next_speed_at"])
    return [endpoint_probe_speed(endpoint=e) for e in endpoints]


def _claim(due, now: datetime) -> list[Endpoint]:
    """Mark the due endpoints as taken, so an overlapping sweep skips them."""
    with transaction.atomic():
        endpoints = list(due.select_for_update(skip_locked=True).order_by("pk"))
        for endpoint in endpoints:
            endpoint.next_probe_at = now + timedelta(seconds=endpoint.interval_s)
        Endpoint.objects.bulk_update(endpoints, ["next_probe_at"])
    return endpoints


def event_payload(event: StatusEvent) -> dict:
    endpoint = event.endpoint
    return {
        "event": "endpoint.status_changed",
        "team": endpoint.team.slug,
        "endpoint": {
            "id": endpoint.pk,
            "name": endpoint.name,
            "kind": endpoint.kind,
            "base_url": endpoint.base_url,
            "model_id": endpoint.model_id,
        },
        "from": event.from_status,
        "to": event.to_status,
        "at": event.created_at.isoformat(),
        "error": event.error,
        "http_status": event.result.http_status if event.result else None,
    }


def event_notify(*, event_id: int) -> StatusEvent:
    """POST the event to the team's webhook: best effort, short timeout, failures logged."""
    event = StatusEvent.objects.select_related("endpoint__team", "result").get(pk=event_id)
    url = event.endpoint.team.webhook_url
    if not url:
        event.webhook_state = StatusEvent.NO_WEBHOOK
        event.save(update_fields=["webhook_state"])
        return event
    try:
        probe.validate_base_url(url.split("?", 1)[0])
        response = httpx.post(
            url,
            json=event_payload(event),
            timeout=settings.PROBES_WEBHOOK_TIMEOUT_S,
            follow_redirects=False,
            headers={"User-Agent": probe.USER_AGENT},
        )
        event.webhook_http_status = response.status_code
        if response.is_success:
            event.webhook_state, event.webhook_error = StatusEvent.SENT, ""
        else:
            event.webhook_state = StatusEvent.FAILED
            event.webhook_error = f"HTTP {response.status_code}"
    except (httpx.HTTPError, OSError, ValueError) as exc:
        event.webhook_state = StatusEvent.FAILED
        event.webhook_error = f"{type(exc).__name__}: {exc}"[:300]
    if event.webhook_state == StatusEvent.FAILED:
        logger.warning(
            "webhook for event %s (team %s) failed: %s",
            event.pk,
            event.endpoint.team.slug,
            event.webhook_error,
        )
    event.save(update_fields=["webhook_state", "webhook_http_status", "webhook_error"])
    return event


def status_label(status: str) -> str:
    if status == UNKNOWN:
        return "not probed yet"
    return dict(Endpoint._meta.get_field("status").choices).get(status, status)
