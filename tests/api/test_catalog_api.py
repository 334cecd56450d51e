"""The catalog over JSON: anyone reads, staff write, bad input is a 422 naming the field."""

import pytest
from django.urls import reverse

from sizing.models import Accelerator
from sizing.services import catalog_load
from teams.services import api_token_create, api_token_revoke

pytestmark = pytest.mark.django_db

CARD = {"slug": "x1", "name": "X1", "vendor": "Acme", "memory_gb": 96, "bandwidth_tb_s": 4.0}


@pytest.fixture
def catalog():
    catalog_load()


def test_anyone_can_list_and_filter_accelerators(client, catalog):
    r = client.get(reverse("api:list_accelerators"), {"min_memory_gb": 250})
    assert r.status_code == 200
    slugs = {a["slug"] for a in r.json()["items"]}
    assert {"gb300-288gb", "mi355x-288gb", "m3-ultra-512gb", "mi325x-256gb"} == slugs


def test_anyone_can_read_a_model_with_its_attention_groups(client, catalog):
    r = client.get(reverse("api:get_model", args=["kimi-k3"]))
    body = r.json()
    assert r.status_code == 200
    assert body["total_params"] == 2_800_000_000_000
    assert [g["kind"] for g in body["attention_groups"]] == ["linear", "mla"]
    assert body["attention_groups"][1]["kv_lora_rank"] is None


def test_an_unknown_slug_is_a_json_404(client, catalog):
    r = client.get(reverse("api:get_model", args=["nope"]))
    assert r.status_code == 404
    assert r.json()["status"] == 404


def test_staff_adds_an_accelerator_with_a_token(client, staff, bearer):
    r = client.post(
        reverse("api:create_accelerator"),
        CARD,
        content_type="application/json",
        headers=bearer(staff),
    )
    assert r.status_code == 201, r.content
    assert Accelerator.objects.get(slug="x1").memory_gb == 96


def test_a_member_may_not_change_the_catalog(client, alice, bearer):
    r = client.post(
        reverse("api:create_accelerator"),
        CARD,
        content_type="application/json",
        headers=bearer(alice),
    )
    assert r.status_code == 403
    assert not Accelerator.objects.exists()


def test_anonymous_writes_need_a_token(client):
    r = client.post(reverse("api:create_accelerator"), CARD, content_type="application/json")
    assert r.status_code == 401
    assert "Bearer" in r.json()["detail"][0]["msg"]


@pytest.mark.parametrize(
    "change, field",
    [
        ({"memory_gb": -80}, "memory_gb"),
        ({"bandwidth_tb_s": 1e9}, "bandwidth_tb_s"),
        ({"colour": "green"}, "colour"),
        ({"kind": "quantum"}, "kind"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(client, staff, bearer, change, field):
    r = client.post(
        reverse("api:create_accelerator"),
        {**CARD, **change},
        content_type="application/json",
        headers=bearer(staff),
    )
    assert r.status_code == 422
    assert field in {d["field"] for d in r.json()["detail"]}
    assert not Accelerator.objects.exists()


def test_active_params_above_total_is_refused(client, staff, bearer):
    model = {"slug": "m", "name": "M", "total_params": 1000, "active_params": 2000}
    r = client.post(
        reverse("api:create_model"), model, content_type="application/json", headers=bearer(staff)
    )
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == "active_params"


def test_a_revoked_token_is_refused(client, staff):
    row, token = api_token_create(user=staff, name="ci")
    api_token_revoke(user=staff, token_id=row.id)
    r = client.post(
        reverse("api:create_accelerator"),
        CARD,
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 401


def test_tokens_are_stored_hashed(staff):
    row, token = api_token_create(user=staff, name="ci")
    assert token not in (row.token_hash, row.prefix)
    assert len(row.token_hash) == 64
