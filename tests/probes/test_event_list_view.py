"""The status-change dashboard."""

import pytest
from django.urls import reverse

from probes.models import StatusEvent

pytestmark = pytest.mark.django_db


def test_it_lists_the_teams_status_changes(client, alice, make_endpoint):
    endpoint = make_endpoint(name="gpu-box")
    StatusEvent.objects.create(
        endpoint=endpoint, from_status="up", to_status="down", webhook_state=StatusEvent.SENT
    )
    client.force_login(alice)

    page = client.get(reverse("probes:events")).content.decode()

    assert "gpu-box" in page
    up, down = '<span class="status status-up">up</span>', '<span class="status status-down">'
    assert f"{up} → {down}down" in page
    assert "Sent" in page


def test_charlie_sees_none_of_them(client, charlie, make_endpoint):
    StatusEvent.objects.create(endpoint=make_endpoint(name="gpu-box"), from_status="up",
                               to_status="down")  # fmt: skip
    client.force_login(charlie)

    page = client.get(reverse("probes:events")).content.decode()

    assert "gpu-box" not in page
    assert "No status changes yet" in page
