"""The builder's helpers: the model search and the price selects swapped in over HTMX."""

import json

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def test_the_model_search_narrows_the_options(client, catalog):
    r = client.get(reverse("scenarios:model-options"), {"q": "qwen3", "llm": "kimi-k3"}, **HX)
    body = r.content.decode()
    assert '<option value="qwen3-32b">' in body
    assert '<option value="kimi-k3" selected>' in body  # the current pick stays
    assert "llama" not in body.lower()


def test_a_search_that_matches_nothing_says_so(client, catalog):
    body = client.get(reverse("scenarios:model-options"), {"q": "zzz"}, **HX).content.decode()
    assert "No model matches" in body


def test_price_selects_for_a_new_accelerator(client, prices):
    r = client.get(
        reverse("scenarios:price-options"),
        {"llm": "kimi-k3", "accelerator": "h200-141gb", "gpu_price": prices["h100"].pk,
         "api_price": ""},
        **HX,
    )  # fmt: skip
    body = r.content.decode()
    # the builder recomputes once the new selects are in
    assert json.loads(r["HX-Trigger-After-Settle"]) == {"recompute": {}}
    assert 'id="id_gpu_price" class="js-preview" hx-swap-oob="true"' in body
    assert 'id="id_api_price" class="js-preview" hx-swap-oob="true"' in body
    # the H100 pick does not apply to an H200: the cheapest H200 price is picked instead
    assert f'<option value="{prices["h200"].pk}" selected>' in body
    assert "Moonshot kimi-k3" in body


def test_a_typed_rate_stays_typed(client, prices):
    body = client.get(
        reverse("scenarios:price-options"),
        {"llm": "kimi-k3", "accelerator": "h100-80gb", "gpu_price": ""},
        **HX,
    ).content.decode()
    assert '<option value="" >' not in body
    assert "selected" not in body.split('id="id_api_price"')[0]


def test_a_feed_of_many_regions_offers_each_providers_cheapest_of_each_kind(client, prices):
    from pricing.models import GpuPrice, Provider

    lam, h100 = prices["lambda"], prices["h100"].accelerator
    other = Provider.objects.create(name="Other Cloud", slug="other")
    rows = [
        GpuPrice(provider=provider, accelerator=h100, usd_per_gpu_hour=usd, kind=kind,
                 region=f"region-{i}", effective_date=prices["h100"].effective_date)
        for i, (provider, usd, kind) in enumerate(
            [(lam, "2.49", "on_demand"), (lam, "2.79", "on_demand"), (lam, "1.10", "spot"),
             (lam, "1.30", "spot"), (other, "2.19", "on_demand"), (other, "2.29", "on_demand")]
        )
    ]  # fmt: skip
    GpuPrice.objects.bulk_create(rows)  # a region each: seven current offers with Lambda's $2.99
    picked = GpuPrice.objects.get(region="region-1")  # Lambda's dearer on-demand region

    body = client.get(
        reverse("scenarios:price-options"),
        {"llm": "kimi-k3", "accelerator": "h100-80gb", "gpu_price": picked.pk},
        **HX,
    ).content.decode()

    select = body.split('id="id_api_price"')[0]
    options = select.split("<option")[2:]  # after the typed-rate one
    assert [o.split(": $")[1][:4] for o in options] == ["1.10", "2.19", "2.49", "2.79"]
    assert f'<option value="{picked.pk}" selected>' in select  # a current pick stays
    assert "4 of 7 current offers" in body
    assert 'href="/prices/?accelerator=h100-80gb"' in body
