"""Staff manage endpoints in the admin; the key is write-only there too."""

import pytest
from django.urls import reverse

from probes import keys, services
from probes.models import Endpoint

pytestmark = pytest.mark.django_db


def test_the_admin_never_shows_the_key(client, staff, make_endpoint):
    endpoint = make_endpoint(name="keyed")
    services.endpoint_save(endpoint=endpoint, api_key="sk-admin-must-not-see")
    client.force_login(staff)

    page = client.get(reverse("admin:probes_endpoint_change", args=[endpoint.pk])).content
    page = page.decode()

    assert "sk-admin-must-not-see" not in page
    assert endpoint.key_encrypted not in page
    assert "stored encrypted" in page


def test_staff_set_a_key_in_the_admin(client, staff, team, make_endpoint):
    endpoint = make_endpoint(name="keyed", base_url="http://10.0.0.5:8000")
    client.force_login(staff)
    url = reverse("admin:probes_endpoint_change", args=[endpoint.pk])
    data = {
        "team": team.pk, "name": "keyed", "base_url": "http://10.0.0.5:8000", "kind": "vllm",
        "model_id": "m", "enabled": "on", "gpu_count": 1, "api_key": "sk-from-admin",
        "key_env_var": "", "interval_s": 60, "timeout_s": 10, "speed_interval_s": 3600,
        "speed_concurrency": 1, "speed_max_tokens": 32,
    }  # fmt: skip

    response = client.post(url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert keys.decrypt(Endpoint.objects.get().key_encrypted) == "sk-from-admin"


def test_probe_history_is_read_only_in_the_admin(client, staff):
    client.force_login(staff)

    assert client.get(reverse("admin:probes_proberesult_add")).status_code == 403
    assert client.get(reverse("admin:probes_statusevent_add")).status_code == 403
