"""The "probe now" buttons: POST with CSRF, queued on commit, only for the endpoint's team."""

import pytest
from django.test import Client
from django.urls import reverse

from probes.models import ProbeResult

pytestmark = pytest.mark.django_db


def test_probe_now_probes_and_records(
    client, alice, make_endpoint, misbehaving, django_capture_on_commit_callbacks
):
    endpoint = make_endpoint(base_url=misbehaving.url("ok/tiny-llama"))
    client.force_login(alice)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("probes:probe", args=[endpoint.pk]))

    assert response.status_code == 302
    assert [r.kind for r in ProbeResult.objects.all()] == ["health"]
    endpoint.refresh_from_db()
    assert endpoint.status == "up"


def test_probe_now_with_speed(
    client, alice, make_endpoint, misbehaving, django_capture_on_commit_callbacks
):
    endpoint = make_endpoint(base_url=misbehaving.url("ok/tiny-llama"))
    client.force_login(alice)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("probes:probe", args=[endpoint.pk]), {"speed": "1"})

    assert sorted(r.kind for r in ProbeResult.objects.all()) == ["health", "speed"]


def test_it_is_post_only(client, alice, make_endpoint):
    endpoint = make_endpoint()
    client.force_login(alice)

    assert client.get(reverse("probes:probe", args=[endpoint.pk])).status_code == 405


def test_it_needs_the_csrf_token(alice, make_endpoint):
    endpoint = make_endpoint()
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    assert client.post(reverse("probes:probe", args=[endpoint.pk])).status_code == 403


def test_charlie_cannot_probe_alices_endpoint(client, charlie, make_endpoint):
    endpoint = make_endpoint()
    client.force_login(charlie)

    assert client.post(reverse("probes:probe", args=[endpoint.pk])).status_code == 404
    assert not ProbeResult.objects.exists()
