"""A scenario applies a measured endpoint's speed factor: "calibrated from endpoint X on date Y".
Only the team's own endpoints can calibrate its scenarios."""

import pytest
from django.urls import reverse
from scenario_data import form_data

from probes.models import Endpoint, ProbeResult
from scenarios.services import scenario_evaluate, scenario_inputs_from_dict

pytestmark = pytest.mark.django_db


@pytest.fixture
def measured(alices_team, catalog):
    """Alice's team measured 0.5x the engine's estimate on its Qwen3 14B server."""
    endpoint = Endpoint.objects.create(
        team=alices_team, name="qwen-box", base_url="http://127.0.0.1:9/", kind="vllm",
        model_id="qwen3-14b",
    )  # fmt: skip
    return ProbeResult.objects.create(
        endpoint=endpoint, kind=ProbeResult.SPEED, status="up", tokens_per_s=50.0,
        estimated_tokens_per_s=100.0, estimate_basis="test",
    )  # fmt: skip


def decode(inputs):
    result, snapshot = scenario_evaluate(inputs=inputs, accelerator_specs=(), tier2_models=())
    return result.decode_tokens_per_s, snapshot


def test_a_calibration_scales_the_decode_estimate_by_its_factor(alice, measured):
    data = form_data(llm="qwen3-14b", concurrency=1)
    plain, _ = decode(scenario_inputs_from_dict(data, user=alice))
    calibrated, snapshot = decode(
        scenario_inputs_from_dict({**data, "calibration": measured.pk}, user=alice)
    )
    assert calibrated == pytest.approx(plain * 0.5)
    assert snapshot["calibration"]["label"].startswith("calibrated from endpoint qwen-box on ")
    assert snapshot["calibration"]["factor"] == 0.5


def test_another_teams_measurement_cannot_be_used(charlie, measured):
    data = {**form_data(llm="qwen3-14b"), "calibration": measured.pk}
    with pytest.raises(Exception) as error:
        scenario_inputs_from_dict(data, user=charlie)
    assert "calibration" in error.value.message_dict


def test_the_builder_shows_where_the_calibration_came_from(client, alice, measured):
    client.force_login(alice)
    data = {**form_data(llm="qwen3-14b", concurrency=1), "calibration": measured.pk}
    r = client.post(reverse("scenarios:builder"), data, headers={"HX-Request": "true"})
    html = r.content.decode()
    assert r.status_code == 200
    assert "calibrated from endpoint qwen-box on" in html
