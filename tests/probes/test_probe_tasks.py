"""The Celery tasks, in-process and through a real worker on Redis."""

import pytest
from django.db import connection

from probes import tasks
from probes.models import Endpoint, ProbeResult, StatusEvent


@pytest.mark.django_db
def test_the_sweep_task_probes_what_is_due(make_endpoint, misbehaving):
    make_endpoint(name="a", base_url=misbehaving.url("ok/tiny-llama"))
    make_endpoint(name="b", base_url=misbehaving.url("loading"), kind="vllm")

    answer = tasks.probe_due.apply().get()

    assert answer["probed"] == 2
    assert sorted(Endpoint.objects.values_list("status", flat=True)) == ["loading", "up"]


def test_the_beat_schedule_runs_both_sweeps(settings):
    tasks_scheduled = {e["task"] for e in settings.CELERY_BEAT_SCHEDULE.values()}

    assert {"probes.probe_due", "probes.speed_due"} <= tasks_scheduled
    assert settings.CELERY_BEAT_SCHEDULE["probes-health-sweep"]["schedule"] == float(
        settings.PROBES_SWEEP_S
    )


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_probes_the_real_server(celery_worker, make_endpoint, llama_server):
    endpoint = make_endpoint(name="tiny", base_url=llama_server.base_url)
    connection.close()  # the worker process writes; let it see committed rows only

    answer = tasks.probe_endpoint.delay(endpoint.pk, speed=True).get(timeout=60)

    assert answer["status"] == "up"
    assert answer["speed_status"] == "up" and answer["tokens_per_s"] > 0
    endpoint.refresh_from_db()
    assert endpoint.status == "up"
    assert sorted(ProbeResult.objects.values_list("kind", flat=True)) == ["health", "speed"]
    assert StatusEvent.objects.get().to_status == "up"
