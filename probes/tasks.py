"""Thin Celery tasks: take an id (or nothing, for a sweep), call a service."""

from celery import shared_task

from probes import services
from probes.models import Endpoint


@shared_task(name="probes.probe_endpoint")
def probe_endpoint(endpoint_id: int, speed: bool = False) -> dict:
    """Probe one endpoint now (the "probe now" button): health, then speed if asked and up."""
    endpoint = Endpoint.objects.get(pk=endpoint_id)
    health = services.endpoints_probe(endpoints=[endpoint])[0]
    answer = {"endpoint": endpoint_id, "status": health.status, "result": health.pk}
    if speed and health.status == "up":
        endpoint.refresh_from_db()
        result = services.endpoint_probe_speed(endpoint=endpoint)
        answer.update(speed_status=result.status, tokens_per_s=result.tokens_per_s)
    return answer


@shared_task(name="probes.probe_due")
def probe_due() -> dict:
    """The beat sweep: every endpoint whose interval has come round, all at once."""
    report = services.endpoints_probe_due()
    return {"probed": report.probed, "seconds": round(report.seconds, 3)}


@shared_task(name="probes.speed_due")
def speed_due() -> dict:
    return {"probed": len(services.endpoints_probe_speed_due())}


@shared_task(name="probes.deliver_event", ignore_result=True)
def deliver_event(event_id: int) -> None:
    services.event_notify(event_id=event_id)
