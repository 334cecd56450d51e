"""An endpoint's page: status history, latency and tokens/s charts, measured vs estimated."""

import json

import pytest
from django.urls import reverse

from probes import services
from sizing.models import Accelerator, LLMModel, WeightFormat

pytestmark = pytest.mark.django_db


@pytest.fixture
def measured(make_endpoint, misbehaving):
    bf16 = WeightFormat.objects.create(name="bf16", bits_per_weight=16)
    llm = LLMModel.objects.create(
        name="Tiny Llama", slug="tiny-llama", total_params=110_000, active_params=110_000,
        layers=2, weight_format=bf16,
    )  # fmt: skip
    cpu = Accelerator.objects.create(
        name="Laptop CPU", slug="laptop-cpu", vendor="Any", memory_gb=16, bandwidth_tb_s=0.05
    )
    endpoint = make_endpoint(
        name="gpu-box", base_url=misbehaving.url("ok/tiny-llama"), llm=llm, accelerator=cpu
    )
    services.endpoints_probe(endpoints=[endpoint])
    speed = services.endpoint_probe_speed(endpoint=endpoint)
    return endpoint, speed


def chart(response, name):
    page = response.content.decode()
    start = page.index(f'<script id="{name}" type="application/json">') + len(
        f'<script id="{name}" type="application/json">'
    )
    return json.loads(page[start : page.index("</script>", start)])


def test_it_shows_measured_next_to_estimated(client, alice, measured):
    endpoint, speed = measured
    client.force_login(alice)

    response = client.get(reverse("probes:endpoint", args=[endpoint.pk]))

    assert response.status_code == 200
    page = response.content.decode()
    assert f"{speed.tokens_per_s:,.1f}" in page
    assert f"{speed.estimated_tokens_per_s:,.1f}" in page
    assert f"× {speed.calibration_factor:,.3f}" in page
    assert f"calibrated from endpoint gpu-box on {speed.started_at:%Y-%m-%d}" in page


def test_it_embeds_the_charts_as_data(client, alice, measured):
    endpoint, speed = measured
    client.force_login(alice)

    response = client.get(reverse("probes:endpoint", args=[endpoint.pk]))

    latency = chart(response, "latency-chart")
    assert latency["data"][0]["name"] == "up"
    tokens = chart(response, "speed-chart")
    assert tokens["data"][0]["y"] == [pytest.approx(speed.tokens_per_s)]
    assert tokens["layout"]["shapes"][0]["y0"] == pytest.approx(speed.estimated_tokens_per_s)
    page = response.content.decode()
    assert 'data-plotly="status-chart"' in page
    assert "vendor/plotly.min.js" in page and "js/charts.js" in page
    assert "<script>" not in page  # no inline script


def test_without_hardware_it_asks_for_it(client, alice, make_endpoint):
    endpoint = make_endpoint(name="hosted", kind="hosted")
    client.force_login(alice)

    page = client.get(reverse("probes:endpoint", args=[endpoint.pk])).content.decode()

    assert "set the catalog model and hardware" in page
    assert "not measured yet" in page


def test_it_never_shows_the_key(client, alice, make_endpoint):
    endpoint = make_endpoint(name="keyed")
    services.endpoint_save(endpoint=endpoint, api_key="sk-live-do-not-show")
    client.force_login(alice)

    page = client.get(reverse("probes:endpoint", args=[endpoint.pk])).content.decode()

    assert "sk-live-do-not-show" not in page
    assert endpoint.key_encrypted not in page
    assert "stored encrypted" in page


def test_charlie_gets_a_404(client, charlie, make_endpoint):
    endpoint = make_endpoint()
    client.force_login(charlie)

    assert client.get(reverse("probes:endpoint", args=[endpoint.pk])).status_code == 404


def test_htmx_refreshes_status_charts_and_history(client, alice, measured):
    endpoint, _ = measured
    client.force_login(alice)

    response = client.get(
        reverse("probes:endpoint", args=[endpoint.pk]), headers={"HX-Request": "true"}
    )

    page = response.content.decode()
    assert page.lstrip().startswith('<div id="endpoint-status"')
    assert "status-up" in page
    assert 'id="latency-chart"' in page and "Recent probes" in page
    assert "Probe now" not in page and "<html" not in page
