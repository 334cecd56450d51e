"""Prices over JSON: anyone reads current and historical prices; staff add dated rows."""

import datetime as dt

import pytest
from django.core.management import call_command
from django.urls import reverse

from pricing.models import GpuPrice
from sizing.services import catalog_load

pytestmark = pytest.mark.django_db
ARTICLE_DAY = "2026-07-20"


@pytest.fixture(autouse=True)
def seeded():
    catalog_load()
    call_command("load_prices", verbosity=0)


def test_the_articles_assumption_is_a_current_h100_price(client):
    r = client.get(reverse("api:gpu_prices"), {"accelerator": "h100-80gb", "kind": "on_demand"})
    assert r.status_code == 200
    rows = r.json()["items"]
    article = [p for p in rows if p["usd_per_gpu_hour"] == "2.500000"]
    assert article and article[0]["effective_date"] == ARTICLE_DAY


def test_the_articles_api_prices_for_kimi_k3(client):
    r = client.get(reverse("api:api_prices"), {"model_id": "kimi-k3"})
    [price] = r.json()["items"]
    assert (
        price["usd_per_m_input_cache_hit"],
        price["usd_per_m_input_cache_miss"],
        price["usd_per_m_output"],
    ) == ("0.300000", "3.000000", "15.000000")


def test_staff_corrects_a_price_and_both_rows_stay(client, staff, bearer):
    old = GpuPrice.objects.filter(accelerator__slug="h100-80gb", usd_per_gpu_hour=2.5).first()
    body = {
        "provider": old.provider.slug,
        "accelerator": "h100-80gb",
        "kind": old.kind,
        "region": old.region,
        "gpu_count": old.gpu_count,
        "offer": old.offer,
        "usd_per_gpu_hour": "2.25",
        "effective_date": dt.date.today().isoformat(),
        "corrects": old.pk,
        "note": "new list price",
    }
    r = client.post(
        reverse("api:add_gpu_price"), body, content_type="application/json", headers=bearer(staff)
    )
    assert r.status_code == 201, r.content
    assert r.json()["entered_by"] == "sam" and r.json()["source"] == "api"
    history = client.get(
        reverse("api:gpu_price_history"),
        {"accelerator": "h100-80gb", "provider": old.provider.slug},
    ).json()["items"]
    assert [p["usd_per_gpu_hour"] for p in history][-2:] == ["2.500000", "2.250000"]
    old.refresh_from_db()
    assert old.usd_per_gpu_hour == 2.5  # never edited in place


def test_a_member_may_not_add_prices(client, alice, bearer):
    body = {"provider": "x", "accelerator": "h100-80gb", "usd_per_gpu_hour": "2"}
    r = client.post(
        reverse("api:add_gpu_price"), body, content_type="application/json", headers=bearer(alice)
    )
    assert r.status_code == 403


@pytest.mark.parametrize(
    "change, field",
    [
        ({"usd_per_gpu_hour": "-1"}, "usd_per_gpu_hour"),
        ({"usd_per_gpu_hour": "5000"}, "usd_per_gpu_hour"),
        ({"kind": "free"}, "kind"),
    ],
)
def test_a_bad_price_is_a_422_naming_the_field(client, staff, bearer, change, field):
    body = {"provider": "x", "accelerator": "h100-80gb", "usd_per_gpu_hour": "2", **change}
    r = client.post(
        reverse("api:add_gpu_price"), body, content_type="application/json", headers=bearer(staff)
    )
    assert r.status_code == 422
    assert field in {d["field"] for d in r.json()["detail"]}


def test_an_unknown_accelerator_filter_is_a_404(client):
    assert client.get(reverse("api:gpu_prices"), {"accelerator": "nope"}).status_code == 404
