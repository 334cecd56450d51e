"""Adding and editing an endpoint: the team picks, the key is write-only, URLs are checked."""

import pytest
from django.urls import reverse

from probes import keys
from probes.models import Endpoint

pytestmark = pytest.mark.django_db


def form_data(team, **overrides):
    data = {
        "team": team.pk, "name": "gpu-box", "base_url": "http://10.0.0.5:8000",
        "kind": "llama_cpp", "model_id": "qwen3-32b", "gpu_count": 1, "key_env_var": "",
        "api_key": "", "interval_s": 60, "timeout_s": 10, "speed_interval_s": 3600,
        "speed_concurrency": 1, "speed_max_tokens": 32, "enabled": "on",
    }  # fmt: skip
    return {**data, **overrides}


def test_alice_adds_an_endpoint_with_a_key(client, alice, team):
    client.force_login(alice)

    response = client.post(reverse("probes:add"), form_data(team, api_key="sk-123"))

    endpoint = Endpoint.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("probes:endpoint", args=[endpoint.pk])
    assert (endpoint.team, endpoint.kind, endpoint.status) == (team, "llama_cpp", "unknown")
    assert keys.decrypt(endpoint.key_encrypted) == "sk-123"


def test_the_form_offers_only_the_users_teams(client, charlie, team):
    client.force_login(charlie)

    response = client.post(reverse("probes:add"), form_data(team))

    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not Endpoint.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("base_url", "ftp://10.0.0.5", "http:// or https://"),
        ("base_url", "http://user:pw@10.0.0.5", "key field"),
        ("key_env_var", "DATABASE_URL", "must start with ENDPOINT_KEY_"),
        ("timeout_s", "90", "less than or equal to 60"),
        ("interval_s", "5", "greater than or equal to 15"),
    ],
)
def test_it_rejects_bad_input(client, alice, team, field, value, message):
    client.force_login(alice)

    response = client.post(reverse("probes:add"), form_data(team, **{field: value}))

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Endpoint.objects.exists()


def test_a_key_and_a_variable_name_exclude_each_other(client, alice, team):
    client.force_login(alice)

    response = client.post(
        reverse("probes:add"), form_data(team, api_key="sk-1", key_env_var="ENDPOINT_KEY_A")
    )

    assert "not both" in response.content.decode()


def test_the_name_is_unique_within_the_team(client, alice, team, make_endpoint):
    make_endpoint(name="gpu-box")
    client.force_login(alice)

    response = client.post(reverse("probes:add"), form_data(team))

    assert response.status_code == 200
    assert Endpoint.objects.count() == 1


def test_editing_never_shows_the_key_and_keeps_it_when_left_empty(client, alice, team):
    client.force_login(alice)
    client.post(reverse("probes:add"), form_data(team, api_key="sk-keep-me"))
    endpoint = Endpoint.objects.get()
    url = reverse("probes:edit", args=[endpoint.pk])

    page = client.get(url).content.decode()
    assert "sk-keep-me" not in page and endpoint.key_encrypted not in page
    assert "A key is stored" in page

    client.post(url, form_data(team, model_id="qwen3-32b-awq"))
    endpoint.refresh_from_db()
    assert endpoint.model_id == "qwen3-32b-awq"
    assert keys.decrypt(endpoint.key_encrypted) == "sk-keep-me"


def test_editing_can_replace_or_remove_the_key(client, alice, team):
    client.force_login(alice)
    client.post(reverse("probes:add"), form_data(team, api_key="sk-old"))
    endpoint = Endpoint.objects.get()
    url = reverse("probes:edit", args=[endpoint.pk])

    client.post(url, form_data(team, api_key="sk-new"))
    endpoint.refresh_from_db()
    assert keys.decrypt(endpoint.key_encrypted) == "sk-new"

    client.post(url, form_data(team, clear_key="on"))
    endpoint.refresh_from_db()
    assert endpoint.key_encrypted == ""

    client.post(url, form_data(team, key_env_var="ENDPOINT_KEY_GPU_BOX"))
    endpoint.refresh_from_db()
    assert endpoint.key_source == "environment variable ENDPOINT_KEY_GPU_BOX"


def test_charlie_cannot_edit_alices_endpoint(client, charlie, make_endpoint):
    endpoint = make_endpoint()
    client.force_login(charlie)

    assert client.get(reverse("probes:edit", args=[endpoint.pk])).status_code == 404
    assert client.post(reverse("probes:edit", args=[endpoint.pk]), {}).status_code == 404


def test_a_hosted_endpoint_links_a_current_api_price(client, alice, team):
    import datetime as dt

    from pricing.models import ApiPrice, Provider

    vendor = Provider.objects.create(name="Moonshot", slug="moonshot", kind="api")
    old = ApiPrice.objects.create(
        provider=vendor, model_id="kimi-k3", effective_date=dt.date(2026, 7, 1),
        valid_until=dt.date(2026, 7, 20), usd_per_m_input_cache_miss=4, usd_per_m_output=20,
    )  # fmt: skip
    current = ApiPrice.objects.create(
        provider=vendor, model_id="kimi-k3", effective_date=dt.date(2026, 7, 20),
        usd_per_m_input_cache_hit="0.30", usd_per_m_input_cache_miss=3, usd_per_m_output=15,
    )  # fmt: skip
    current.refresh_from_db()
    old.refresh_from_db()
    client.force_login(alice)

    page = client.get(reverse("probes:add")).content.decode()
    assert str(current) in page and str(old) not in page  # superseded rows are not offered

    client.post(
        reverse("probes:add"),
        form_data(team, kind="hosted", base_url="https://api.moonshot.example/v1",
                  model_id="kimi-k3", api_price=current.pk),
    )  # fmt: skip
    endpoint = Endpoint.objects.get()
    assert endpoint.api_price == current
    detail = client.get(reverse("probes:endpoint", args=[endpoint.pk])).content.decode()
    assert "$3 input, $15 output per M tokens, from 2026-07-20" in detail
