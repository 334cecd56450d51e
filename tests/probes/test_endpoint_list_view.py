"""The endpoints page: current status and uptime over 24 h / 7 d, and recent status changes."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from probes.models import ProbeResult, StatusEvent

pytestmark = pytest.mark.django_db


def add_results(endpoint, statuses, *, hours_ago):
    for status in statuses:
        ProbeResult.objects.create(
            endpoint=endpoint, status=status,
            started_at=timezone.now() - timedelta(hours=hours_ago),
        )  # fmt: skip


def test_it_needs_a_login(client):
    response = client.get(reverse("probes:endpoints"))

    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_it_lists_the_teams_endpoints_with_uptime(client, alice, make_endpoint):
    endpoint = make_endpoint(name="gpu-box", status="up")
    add_results(endpoint, ["up", "up", "up", "down"], hours_ago=1)  # 24 h: 3 of 4
    add_results(endpoint, ["down", "down", "down", "down"], hours_ago=48)  # 7 d: 3 of 8
    add_results(endpoint, ["down"] * 10, hours_ago=24 * 9)  # too old for either
    client.force_login(alice)

    response = client.get(reverse("probes:endpoints"))

    assert response.status_code == 200
    page = response.content.decode()
    assert "gpu-box" in page
    assert '<span class="status status-up">up</span>' in page
    assert "75.00 %" in page
    assert "37.50 %" in page


def test_an_endpoint_never_probed_has_no_uptime(client, alice, make_endpoint):
    make_endpoint(name="new-box")
    client.force_login(alice)

    page = client.get(reverse("probes:endpoints")).content.decode()

    assert "not probed yet" in page
    assert "–" in page


def test_bob_sees_his_teams_endpoints(client, bob, make_endpoint):
    make_endpoint(name="gpu-box")
    client.force_login(bob)

    assert "gpu-box" in client.get(reverse("probes:endpoints")).content.decode()


def test_charlie_does_not_see_another_teams_endpoints(client, charlie, make_endpoint):
    endpoint = make_endpoint(name="gpu-box")
    StatusEvent.objects.create(endpoint=endpoint, from_status="unknown", to_status="up")
    client.force_login(charlie)

    page = client.get(reverse("probes:endpoints")).content.decode()

    assert "gpu-box" not in page
    assert "No endpoints yet" in page


def test_it_shows_recent_status_changes(client, alice, make_endpoint):
    endpoint = make_endpoint(name="gpu-box")
    StatusEvent.objects.create(
        endpoint=endpoint, from_status="up", to_status="down", error="connection refused"
    )
    client.force_login(alice)

    page = client.get(reverse("probes:endpoints")).content.decode()

    assert "Recent status changes" in page
    assert "connection refused" in page


def test_htmx_refreshes_only_the_status_region(client, alice, make_endpoint):
    make_endpoint(name="gpu-box")
    client.force_login(alice)

    response = client.get(reverse("probes:endpoints"), headers={"HX-Request": "true"})

    page = response.content.decode()
    assert page.lstrip().startswith('<div id="endpoint-status"')
    assert "gpu-box" in page
    assert "<html" not in page
