"""Redis unavailable: pages and the API keep serving; a task that cannot be queued says so.

Redis is only the task queue (sessions and the catalog cache are elsewhere), so nothing a page
or the API shows depends on it. What needs it is queueing a task: that must fail where someone
sees it, never silently and never as a 500, and work again once Redis is back.
"""

import time

import pytest
from django.core.management import call_command
from django.urls import reverse
from fault_helpers import ROOT, broker_redis, needs_broker, wait_until

from pricing.models import Feed, GpuPrice
from probes.models import Endpoint, ProbeResult
from scenarios.forms import builder_initial
from scenarios.services import scenario_create, scenario_inputs_from_dict
from sizing.services import catalog_load
from teams.models import Membership, Team

pytestmark = [
    pytest.mark.integration,
    needs_broker,
    # Committed rows, so that on_commit callbacks run in the view as in production.
    pytest.mark.django_db(transaction=True),
]

HX = {"HTTP_HX_REQUEST": "true"}
K3 = {"llm": "kimi-k3", "accelerator": "h100-80gb"}
SIZING_BODY = {
    "model": "kimi-k3",
    "accelerator": "h100-80gb",
    "workload": {"context_tokens": 8192, "concurrency": 8, "monthly_output_tokens": 9.6e8},
    "prices": {"usd_per_gpu_hour": 2.5, "api_usd_per_m_output": 15.0},
}
# kombu retries a publish three times, 0.2 s apart, on a broker that refuses connections.
QUEUE_FAILS_WITHIN_S = 15


@pytest.fixture
def redis_down():
    """Stop the broker's Redis (shutdown nosave); start it again as it was, whatever happens."""
    server = broker_redis()
    config = server.config()
    server.shutdown()
    try:
        yield server
    finally:
        if not server.up():
            server.start(config)


@pytest.fixture
def planner(alice):
    """Alice, on the infra team, with the seed catalog, a saved scenario and an endpoint."""
    catalog_load()
    team = Team.objects.create(name="Infra", slug="infra")
    Membership.objects.create(team=team, user=alice, role="admin")
    scenario_create(owner=alice, inputs=scenario_inputs_from_dict(K3), name="K3 on H100")
    return Endpoint.objects.create(
        team=team, name="gpu-box", base_url="http://127.0.0.1:9", kind="vllm", model_id="m"
    )


def test_pages_and_the_api_keep_serving(client, alice, planner, redis_down):
    client.force_login(alice)
    pages = [
        client.get(reverse("home")),
        client.get(reverse("scenarios:library")),
        client.get(reverse("scenarios:builder")),
        client.post(reverse("scenarios:builder"), {**builder_initial(), **K3}, **HX),
        client.get(reverse("prices")),
        client.get(reverse("probes:endpoint", args=[planner.pk])),
    ]
    api = [
        client.post(reverse("api:size"), SIZING_BODY, content_type="application/json"),
        client.get(reverse("api:list_models")),
        client.get(reverse("api:list_accelerators")),
    ]

    assert [r.status_code for r in pages + api] == [200] * (len(pages) + len(api))
    assert "K3 on H100" in pages[1].content.decode()
    assert api[0].json()["recommended_gpus"] > 0


def test_probe_now_says_it_could_not_be_queued(client, alice, planner, redis_down):
    client.force_login(alice)

    started = time.monotonic()
    response = client.post(reverse("probes:probe", args=[planner.pk]), follow=True)

    assert time.monotonic() - started < QUEUE_FAILS_WITHIN_S
    assert response.status_code == 200
    assert response.redirect_chain == [(reverse("probes:endpoint", args=[planner.pk]), 302)]
    messages = [str(m) for m in response.context["messages"]]
    assert any("could not be queued" in m for m in messages), messages
    assert not any("queued." in m for m in messages)
    assert not ProbeResult.objects.exists()


def test_the_price_refresh_command_needs_no_redis(planner, redis_down, capsys, settings):
    settings.PRICE_FEED_ROOTS = [ROOT]
    Feed.objects.create(
        name="nebius",
        format=Feed.SKYPILOT_CSV,
        location="tests/data/price-feeds/skypilot/nebius_vms_v8_gpu_rows.csv",
        provider="nebius",
    )

    call_command("refresh_prices")

    assert "nebius: read" in capsys.readouterr().out
    assert GpuPrice.objects.filter(provider__slug="nebius").count() == 19


def test_when_redis_is_back_probe_now_queues_and_the_worker_runs_it(
    client, alice, planner, celery_worker
):
    client.force_login(alice)
    url = reverse("probes:probe", args=[planner.pk])
    server = broker_redis()
    config = server.config()
    server.shutdown()
    try:
        refused = client.post(url, follow=True)
    finally:
        server.start(config)

    queued = client.post(url, follow=True)

    assert "could not be queued" in _messages(refused)
    assert "A health probe for gpu-box queued." in _messages(queued)
    # The worker that lived through the outage reconnects and runs the probe.
    wait_until(ProbeResult.objects.exists, 90, "the queued probe to be recorded", interval_s=0.2)


def _messages(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])
