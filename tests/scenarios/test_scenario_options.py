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
