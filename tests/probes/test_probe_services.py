"""Recording probes: history, status changes as events, webhooks, the sweep, keys, estimates."""

import json
import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from probes import keys, probe, selectors, services
from probes.models import Endpoint, ProbeResult, StatusEvent
from sizing.engine import Assumptions, Workload, decode_speed
from sizing.models import Accelerator, AttentionGroup, LLMModel, WeightFormat
from sizing.selectors import accelerator_spec, model_spec

pytestmark = pytest.mark.django_db


@pytest.fixture
def served(make_endpoint, llama_server):
    return make_endpoint(name="tiny", base_url=llama_server.base_url)


@pytest.fixture
def catalog():
    bf16 = WeightFormat.objects.create(name="bf16", bits_per_weight=16)
    llm = LLMModel.objects.create(
        name="Tiny Llama", slug="tiny-llama", total_params=110_000, active_params=110_000,
        layers=2, weight_format=bf16, kv_dtype="bf16",
    )  # fmt: skip
    AttentionGroup.objects.create(llm=llm, kind="full", layers=2, kv_heads=2, head_dim=16)
    cpu = Accelerator.objects.create(
        name="Laptop CPU", slug="laptop-cpu", vendor="Any", kind="consumer", memory_gb=16,
        bandwidth_tb_s=0.05, bf16_tflops=0.5,
    )  # fmt: skip
    return llm, cpu


# History and status changes.


def test_it_stores_each_probe_as_history(served, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        services.endpoints_probe(endpoints=[served])
        services.endpoints_probe(endpoints=[served])

    results = list(ProbeResult.objects.filter(endpoint=served))
    assert [r.status for r in results] == ["up", "up"]
    assert results[0].models_listed == ["tiny-llama"]
    assert results[0].http_status == 200
    assert results[0].latency_ms > 0


def test_the_first_probe_and_each_change_are_events(
    make_endpoint, own_llama_server, django_capture_on_commit_callbacks
):
    endpoint = make_endpoint(name="own", base_url=own_llama_server.base_url)
    with django_capture_on_commit_callbacks(execute=True):
        services.endpoints_probe(endpoints=[endpoint])
        services.endpoints_probe(endpoints=[endpoint])  # still up: no event
        own_llama_server.stop()
        services.endpoints_probe(endpoints=[endpoint])

    endpoint.refresh_from_db()
    assert endpoint.status == probe.DOWN
    changes = [(e.from_status, e.to_status) for e in StatusEvent.objects.order_by("id")]
    assert changes == [("unknown", "up"), ("up", "down")]
    down = StatusEvent.objects.get(to_status="down")
    assert "connection refused" in down.error
    assert down.result.status == "down"
    assert endpoint.status_since == down.created_at


def test_a_status_change_is_posted_to_the_team_webhook(
    team, make_endpoint, misbehaving, django_capture_on_commit_callbacks
):
    team.webhook_url = misbehaving.url("hook/200") + "/infra"
    team.save()
    endpoint = make_endpoint(name="flaky", base_url=misbehaving.url("loading"), kind="vllm")

    with django_capture_on_commit_callbacks(execute=True):
        services.endpoints_probe(endpoints=[endpoint])

    [posted] = misbehaving.seen("/hook/200/infra")
    body = json.loads(posted.body)
    assert body == {
        "event": "endpoint.status_changed",
        "team": "infra",
        "endpoint": {
            "id": endpoint.pk, "name": "flaky", "kind": "vllm",
            "base_url": misbehaving.url("loading"), "model_id": "tiny-llama",
        },
        "from": "unknown",
        "to": "loading",
        "at": body["at"],
        "error": 'HTTP 503: {"error": {"code": 503, "message": "Loading model"}}',
        "http_status": 503,
    }  # fmt: skip
    assert StatusEvent.objects.get().webhook_state == StatusEvent.SENT


def test_a_failing_webhook_is_logged_not_raised(
    team, make_endpoint, misbehaving, django_capture_on_commit_callbacks, caplog
):
    team.webhook_url = misbehaving.url("hook/500")
    team.save()
    endpoint = make_endpoint(base_url=misbehaving.url("garbage"))

    with caplog.at_level(logging.WARNING), django_capture_on_commit_callbacks(execute=True):
        services.endpoints_probe(endpoints=[endpoint])

    event = StatusEvent.objects.get()
    assert (event.webhook_state, event.webhook_http_status) == (StatusEvent.FAILED, 500)
    assert "webhook for event" in caplog.text


def test_a_webhook_that_never_answers_times_out_quickly(
    team, make_endpoint, misbehaving, settings, django_capture_on_commit_callbacks
):
    settings.PROBES_WEBHOOK_TIMEOUT_S = 1
    team.webhook_url = misbehaving.url("hang")
    team.save()
    endpoint = make_endpoint(base_url=misbehaving.url("garbage"))

    with django_capture_on_commit_callbacks(execute=True):
        services.endpoints_probe(endpoints=[endpoint])

    event = StatusEvent.objects.get()
    assert event.webhook_state == StatusEvent.FAILED
    assert "Timeout" in event.webhook_error


def test_without_a_webhook_the_event_says_so(make_endpoint, django_capture_on_commit_callbacks):
    endpoint = make_endpoint()  # port 9: nothing listens

    with django_capture_on_commit_callbacks(execute=True):
        services.endpoints_probe(endpoints=[endpoint])

    assert StatusEvent.objects.get().webhook_state == StatusEvent.NO_WEBHOOK


# The schedule.


def test_the_sweep_probes_only_what_is_due(make_endpoint, misbehaving, settings):
    settings.PROBES_SWEEP_S = 15
    url = misbehaving.url("ok/tiny-llama")
    now = timezone.now()
    never = make_endpoint(name="never probed", base_url=url)
    due = make_endpoint(name="due", base_url=url, next_probe_at=now + timedelta(seconds=10))
    later = make_endpoint(name="later", base_url=url, next_probe_at=now + timedelta(seconds=40))
    paused = make_endpoint(name="paused", base_url=url, enabled=False)

    report = services.endpoints_probe_due(now=now)

    assert {r.endpoint.name for r in report.results} == {"never probed", "due"}
    assert report.probed == 2
    for endpoint in (never, due, later, paused):
        endpoint.refresh_from_db()
    assert never.next_probe_at == now + timedelta(seconds=never.interval_s)
    assert later.last_probed_at is None and paused.last_probed_at is None
    assert services.endpoints_probe_due(now=now).probed == 0  # nothing due twice


def test_a_stopped_server_is_marked_down_within_one_interval(
    make_endpoint, own_llama_server, settings
):
    settings.PROBES_SWEEP_S = 15
    endpoint = make_endpoint(base_url=own_llama_server.base_url, interval_s=60)
    start = timezone.now()
    services.endpoints_probe_due(now=start)
    own_llama_server.stop()  # right after a probe: the worst case

    # Sweeps every 15 s: the first that probes again comes no later than one interval on.
    sweeps = [start + timedelta(seconds=15 * i) for i in range(1, 5)]
    marked = next(t for t in sweeps if services.endpoints_probe_due(now=t).probed)

    endpoint.refresh_from_db()
    assert endpoint.status == probe.DOWN
    assert marked - start <= timedelta(seconds=endpoint.interval_s)


def test_the_speed_sweep_measures_endpoints_that_are_up(make_endpoint, misbehaving, settings):
    now = timezone.now()
    up = make_endpoint(name="up", base_url=misbehaving.url("ok/tiny-llama"), status="up")
    make_endpoint(name="down", base_url=misbehaving.url("ok/tiny-llama"), status="down")
    make_endpoint(name="off", base_url=misbehaving.url("ok/x"), status="up", speed_interval_s=0)

    results = services.endpoints_probe_speed_due(now=now)

    assert [r.endpoint_id for r in results] == [up.pk]
    up.refresh_from_db()
    assert up.next_speed_at >= now + timedelta(seconds=up.speed_interval_s)
    assert services.endpoints_probe_speed_due(now=now) == []


# Speed, estimate, calibration.


def test_a_speed_probe_records_tokens_and_usage(make_endpoint, misbehaving):
    endpoint = make_endpoint(base_url=misbehaving.url("ok/tiny-llama"), speed_concurrency=2)

    result = services.endpoint_probe_speed(endpoint=endpoint)

    assert result.kind == ProbeResult.SPEED
    assert (result.status, result.concurrency) == ("up", 2)
    assert (result.prompt_tokens, result.output_tokens) == (2 * 17, 2 * 12)  # the usage blocks
    assert result.tokens_per_s > 0 and result.ttft_ms > 0
    assert result.estimated_tokens_per_s is None  # the endpoint does not say what it runs on


def test_measured_speed_sits_next_to_the_estimate(make_endpoint, llama_server, catalog):
    llm, cpu = catalog
    endpoint = make_endpoint(base_url=llama_server.base_url, llm=llm, accelerator=cpu)

    result = services.endpoint_probe_speed(endpoint=endpoint)

    spec = decode_speed(
        model_spec(llm), accelerator_spec(cpu), 1, Workload(context_tokens=128, concurrency=1)
    )
    assert result.status == "up", result.error
    assert result.estimated_tokens_per_s == pytest.approx(spec.tokens_per_s)
    assert result.calibration_factor == pytest.approx(result.tokens_per_s / spec.tokens_per_s)
    assert result.estimate_basis.startswith("Tiny Llama on 1 × Laptop CPU, batch 1")


def test_the_calibration_names_its_endpoint_and_date(make_endpoint, misbehaving, catalog, alice):
    llm, cpu = catalog
    endpoint = make_endpoint(
        name="gpu-box", base_url=misbehaving.url("ok/tiny-llama"), llm=llm, accelerator=cpu
    )
    result = services.endpoint_probe_speed(endpoint=endpoint)

    calibration = selectors.latest_calibration(endpoint)

    assert calibration.factor == pytest.approx(result.calibration_factor)
    assert calibration.label == (
        f"calibrated from endpoint gpu-box on {result.started_at:%Y-%m-%d}"
    )
    assert selectors.calibrations(alice, llm=llm) == [calibration]


def test_nobody_else_gets_the_teams_calibrations(make_endpoint, misbehaving, catalog, charlie):
    llm, cpu = catalog
    endpoint = make_endpoint(base_url=misbehaving.url("ok/tiny-llama"), llm=llm, accelerator=cpu)
    services.endpoint_probe_speed(endpoint=endpoint)

    assert selectors.calibrations(charlie) == []


@pytest.mark.parametrize("factor", [0.25, 0.8, 1.0, 1.7])
@pytest.mark.parametrize("batch", [1, 64])
def test_a_calibration_scales_the_estimate_by_exactly_its_factor(catalog, factor, batch):
    llm, cpu = catalog
    workload = Workload(context_tokens=128, concurrency=batch)
    plain = decode_speed(model_spec(llm), accelerator_spec(cpu), 1, workload)

    calibrated = decode_speed(
        model_spec(llm), accelerator_spec(cpu), 1, workload,
        selectors.calibrated_assumptions(Assumptions(), factor),
    )  # fmt: skip

    assert calibrated.tokens_per_s == pytest.approx(plain.tokens_per_s * factor, rel=1e-12)


def test_a_calibration_factor_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        selectors.calibrated_assumptions(Assumptions(), 0)


# Keys.


def test_a_stored_key_is_encrypted_at_rest(make_endpoint, llama_server_with_key):
    endpoint = make_endpoint(base_url=llama_server_with_key.base_url)

    services.endpoint_save(endpoint=endpoint, api_key=llama_server_with_key.api_key)

    row = Endpoint.objects.values("key_encrypted").get(pk=endpoint.pk)
    assert row["key_encrypted"] and llama_server_with_key.api_key not in row["key_encrypted"]
    assert keys.decrypt(row["key_encrypted"]) == llama_server_with_key.api_key
    [result] = services.endpoints_probe(endpoints=[Endpoint.objects.get(pk=endpoint.pk)])
    assert result.status == "up", result.error


def test_a_key_from_the_environment(make_endpoint, llama_server_with_key, monkeypatch):
    endpoint = make_endpoint(
        base_url=llama_server_with_key.base_url, key_env_var="ENDPOINT_KEY_TEST"
    )
    monkeypatch.setenv("ENDPOINT_KEY_TEST", llama_server_with_key.api_key)

    assert services.endpoints_probe(endpoints=[endpoint])[0].status == "up"

    monkeypatch.delenv("ENDPOINT_KEY_TEST")
    [result] = services.endpoints_probe(endpoints=[endpoint])
    assert result.status == "auth_error"
    assert "the environment variable ENDPOINT_KEY_TEST is not set" in result.error


def test_a_key_that_no_longer_decrypts_says_so(make_endpoint, misbehaving, settings):
    endpoint = make_endpoint(base_url=misbehaving.url("auth/k/tiny-llama"))
    services.endpoint_save(endpoint=endpoint, api_key="k")
    settings.ENDPOINT_SECRET_KEY = "rotated-without-re-encrypting"

    [result] = services.endpoints_probe(endpoints=[endpoint])

    assert result.status == "auth_error"
    assert "cannot be decrypted" in result.error


def test_a_variable_name_replaces_a_stored_key_and_back(make_endpoint):
    endpoint = make_endpoint()
    services.endpoint_save(endpoint=endpoint, api_key="sk-1")
    endpoint.key_env_var = "ENDPOINT_KEY_PROD"

    services.endpoint_save(endpoint=endpoint)
    assert (endpoint.key_encrypted, endpoint.key_source) == (
        "", "environment variable ENDPOINT_KEY_PROD"
    )  # fmt: skip

    services.endpoint_save(endpoint=endpoint, api_key="sk-2")
    assert (endpoint.key_env_var, endpoint.key_source) == ("", "stored encrypted")

    services.endpoint_save(endpoint=endpoint, clear_key=True)
    assert endpoint.key_source == "no key"


@pytest.mark.parametrize("name", ["DATABASE_URL", "SECRET_KEY", "ENDPOINT_KEY_", "endpoint_key_x"])
def test_only_endpoint_key_variables_may_be_named(make_endpoint, name):
    from django.core.exceptions import ValidationError

    endpoint = make_endpoint()
    endpoint.key_env_var = name

    with pytest.raises(ValidationError, match="ENDPOINT_KEY_"):
        services.endpoint_save(endpoint=endpoint)
    with pytest.raises(ValueError):
        keys.from_env(name)
