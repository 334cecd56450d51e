"""Endpoints and probe history over JSON: team members only, and the key never comes back."""

import pytest
from django.urls import reverse

from probes.models import Endpoint, ProbeResult
from probes.services import endpoint_save
from teams.models import Membership, Team

pytestmark = pytest.mark.django_db
SECRET = "sk-very-secret-key"


@pytest.fixture
def endpoint(alice):
    team = Team.objects.create(name="Team A", slug="team-a")
    Membership.objects.create(team=team, user=alice)
    ep = Endpoint(team=team, name="llama", base_url="http://127.0.0.1:9/", kind="llama_cpp",
                  model_id="tiny")  # fmt: skip
    endpoint_save(endpoint=ep, api_key=SECRET)
    ProbeResult.objects.create(endpoint=ep, status="up", http_status=200, latency_ms=3.5)
    return ep


@pytest.fixture
def charlie(django_user_model):
    user = django_user_model.objects.create_user("charlie", password="charlie-pass-123")
    Membership.objects.create(team=Team.objects.create(name="B", slug="team-b"), user=user)
    return user


def test_a_member_lists_endpoints_without_the_key(client, alice, endpoint, bearer):
    r = client.get(reverse("api:list_endpoints"), headers=bearer(alice))
    assert r.status_code == 200
    [row] = r.json()["items"]
    assert row["has_key"] is True and row["uptime_24h"] == 1.0
    assert SECRET not in r.content.decode()
    assert endpoint.key_encrypted not in r.content.decode()


def test_a_member_reads_the_probe_history(client, alice, endpoint, bearer):
    r = client.get(reverse("api:endpoint_results", args=[endpoint.pk]), headers=bearer(alice))
    [result] = r.json()["items"]
    assert result["status"] == "up" and result["latency_ms"] == 3.5


def test_another_team_gets_404(client, charlie, endpoint, bearer):
    assert (
        client.get(
            reverse("api:get_endpoint", args=[endpoint.pk]), headers=bearer(charlie)
        ).status_code
        == 404
    )
    r = client.get(reverse("api:endpoint_results", args=[endpoint.pk]), headers=bearer(charlie))
    assert r.status_code == 404
    assert client.get(reverse("api:list_endpoints"), headers=bearer(charlie)).json()["count"] == 0


def test_anonymous_callers_need_a_token(client, endpoint):
    assert client.get(reverse("api:list_endpoints")).status_code == 401
