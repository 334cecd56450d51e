from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from kombu.exceptions import OperationalError as QueueUnavailable

from probes import charts, selectors, services, tasks
from probes.forms import EndpointForm
from probes.models import Endpoint, ProbeResult

HISTORY_DAYS = 7
SPEED_HISTORY_DAYS = 30
MIN_WINDOW = timedelta(hours=1)


def _endpoint_or_404(request, pk: int) -> Endpoint:
    # Not on the endpoint's team: the endpoint does not exist, as far as they can tell.
    try:
        return selectors.endpoint_for(request.user, pk)
    except Endpoint.DoesNotExist:
        raise Http404("No such endpoint") from None


def _window(results, now, days: int):
    """From the first result (at least an hour back) to now, at most `days` back."""
    start = min(results[0].started_at, now - MIN_WINDOW) if results else now - MIN_WINDOW
    return max(start, now - timedelta(days=days)), now


def _with_uptime(endpoints):
    for e in endpoints:
        e.uptime_24h = selectors.uptime(e.up_24h, e.probes_24h)
        e.uptime_7d = selectors.uptime(e.up_7d, e.probes_7d)
    return endpoints


@login_required
def endpoint_list(request):
    context = {
        "endpoints": _with_uptime(list(selectors.endpoints_for(request.user))),
        "events": selectors.recent_events(request.user, limit=15),
        "refresh_s": settings.PROBES_SWEEP_S,
    }
    template = "probes/endpoint_list.html"
    return render(request, f"{template}#status" if request.htmx else template, context)


@login_required
def event_list(request):
    events = selectors.recent_events(request.user, limit=200)
    return render(request, "probes/event_list.html", {"events": events})


@login_required
def endpoint_detail(request, pk: int):
    endpoint = _with_uptime([_endpoint_or_404(request, pk)])[0]
    now = timezone.now()
    health = selectors.history(
        endpoint, kind=ProbeResult.HEALTH, since=now - timedelta(days=HISTORY_DAYS)
    )
    speed = selectors.history(
        endpoint, kind=ProbeResult.SPEED, since=now - timedelta(days=SPEED_HISTORY_DAYS)
    )
    week, month = _window(health, now, HISTORY_DAYS), _window(speed, now, SPEED_HISTORY_DAYS)
    estimate = selectors.speed_estimate(endpoint)
    estimate_now = estimate.tokens_per_s if estimate is not None and estimate.known else None
    health_points = [charts.Point(r.started_at, r.status, latency_ms=r.latency_ms) for r in health]
    speed_points = [
        charts.Point(r.started_at, r.status, tokens_per_s=r.tokens_per_s,
                     estimated_tokens_per_s=r.estimated_tokens_per_s)
        for r in speed
    ]  # fmt: skip
    context = {
        "endpoint": endpoint,
        "latest_speed": next((r for r in reversed(speed) if r.status == "up"), None),
        "estimate": estimate,
        "estimate_basis": selectors.estimate_basis(endpoint, endpoint.speed_concurrency),
        "calibration": selectors.latest_calibration(endpoint),
        "results": endpoint.results.all()[:25],
        "events": endpoint.events.all()[:15],
        "status_chart": charts.status_figure(health_points, week),
        "latency_chart": charts.latency_figure(health_points, week),
        "speed_chart": charts.speed_figure(speed_points, month, estimate_tokens_per_s=estimate_now),
        "refresh_s": settings.PROBES_SWEEP_S,
    }
    template = "probes/endpoint_detail.html"
    return render(request, f"{template}#status" if request.htmx else template, context)


@login_required
def endpoint_add(request):
    form = EndpointForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        endpoint = services.endpoint_save(
            endpoint=form.save(commit=False), api_key=form.cleaned_data["api_key"],
            user=request.user,
        )  # fmt: skip
        messages.success(request, f"Endpoint {endpoint.name} added; the next sweep probes it.")
        return redirect("probes:endpoint", pk=endpoint.pk)
    return render(request, "probes/endpoint_form.html", {"form": form})


@login_required
def endpoint_edit(request, pk: int):
    endpoint = _endpoint_or_404(request, pk)
    form = EndpointForm(request.POST or None, instance=endpoint, user=request.user)
    if request.method == "POST" and form.is_valid():
        services.endpoint_save(
            endpoint=form.save(commit=False),
            api_key=form.cleaned_data["api_key"],
            clear_key=form.cleaned_data.get("clear_key", False),
            user=request.user,
        )
        messages.success(request, f"Endpoint {endpoint.name} saved.")
        return redirect("probes:endpoint", pk=endpoint.pk)
    return render(request, "probes/endpoint_form.html", {"form": form, "endpoint": endpoint})


@login_required
@require_POST
def endpoint_probe(request, pk: int):
    endpoint = _endpoint_or_404(request, pk)
    speed = request.POST.get("speed") == "1"
    what = "Health and speed probes" if speed else "A health probe"
    try:
        # Nobody waits for the result: without ignore_result the send would first subscribe to
        # it in Redis, which blocks for 20 s and raises RuntimeError when Redis is down.
        transaction.on_commit(
            lambda: tasks.probe_endpoint.apply_async(
                (endpoint.pk,), {"speed": speed}, ignore_result=True
            )
        )
    except QueueUnavailable:
        messages.error(
            request,
            f"{what} for {endpoint.name} could not be queued: the task queue is unavailable. "
            "Try again in a minute.",
        )
    else:
        messages.success(request, f"{what} for {endpoint.name} queued.")
    return redirect("probes:endpoint", pk=endpoint.pk)
