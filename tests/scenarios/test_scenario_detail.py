"""A saved scenario's permalink: who may see it, what it shows, and when prices have moved."""

import datetime as dt
from decimal import Decimal

import pytest
from django.urls import reverse

from scenarios.models import PUBLIC, TEAM
from sizing.models import LLMModel

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def url(scenario):
    return reverse("scenarios:detail", args=[scenario.pk])


def test_alice_sees_her_scenario_with_its_results(client, alice, make_scenario):
    scenario = make_scenario(alice, tags="k3 article")
    client.force_login(alice)
    body = client.get(url(scenario)).content.decode()
    assert "K3 on H100" in body and "prices as of" in body
    assert "Kimi K3 cannot run on one GPU" in body and "$57,600" in body
    assert 'href="/scenarios/?tag=article"' in body
    assert reverse("scenarios:edit", args=[scenario.pk]) in body  # hers to edit
    assert 'data-plotly="chart-break-even"' in body


def test_bob_sees_a_team_scenario_but_cannot_edit_it(
    client, alice, bob, alices_team, make_scenario
):
    scenario = make_scenario(alice, visibility=TEAM, team=alices_team)
    client.force_login(bob)
    r = client.get(url(scenario))
    assert r.status_code == 200
    assert reverse("scenarios:edit", args=[scenario.pk]) not in r.content.decode()


def test_bob_does_not_see_alices_private_scenario(client, alice, bob, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(bob)
    assert client.get(url(scenario)).status_code == 404


@pytest.mark.parametrize("visibility", ["private", "team"])
def test_charlie_gets_404_by_url_and_by_htmx(client, alice, alices_team, charlie, make_scenario,
                                             visibility):  # fmt: skip
    scenario = make_scenario(alice, visibility=visibility, team=alices_team)
    client.force_login(charlie)
    for name in ("detail", "print", "edit"):
        assert client.get(reverse(f"scenarios:{name}", args=[scenario.pk]), **HX).status_code == 404
    for fmt in ("csv", "json"):
        assert client.get(reverse("scenarios:export", args=[scenario.pk, fmt])).status_code == 404


def test_a_public_scenario_is_readable_without_signing_in(client, alice, make_scenario):
    scenario = make_scenario(alice, visibility=PUBLIC)
    body = client.get(url(scenario)).content.decode()
    assert "K3 on H100" in body and "Clone" not in body


def test_a_private_scenario_is_not(client, alice, make_scenario):
    assert client.get(url(make_scenario(alice))).status_code == 404


def test_it_says_when_the_current_price_differs(client, alice, prices, make_scenario):
    scenario = make_scenario(alice, gpu_price=prices["h100"].pk)
    client.force_login(alice)
    assert "have changed since" not in client.get(url(scenario)).content.decode()
    prices["gpu"](prices["h100"].accelerator, "2.19", dt.date(2026, 8, 1))
    body = client.get(url(scenario)).content.decode()
    assert "Lambda now charges $2.19 per GPU-hour (as of 2026-08-01)" in body
    assert "this scenario used $2.99 (as of 2026-07-20)" in body
    assert "$68,890" in body  # still computed at $2.99: 32 x 720 x 2.99


def test_it_says_when_the_catalog_changed(client, alice, make_scenario):
    scenario = make_scenario(alice)
    LLMModel.objects.filter(slug="kimi-k3").update(active_params=110_000_000_000)
    client.force_login(alice)
    body = client.get(url(scenario)).content.decode()
    assert "The catalog&#x27;s Kimi K3 has changed since (active_params)" in body


def test_the_api_price_change_is_noticed_too(client, alice, prices, make_scenario):
    from pricing.models import ApiPrice
    from pricing.services import api_price_record

    scenario = make_scenario(alice, api_price=prices["api"].pk)
    old = prices["api"]
    api_price_record(
        price=ApiPrice(
            provider=old.provider, model_id=old.model_id, llm=old.llm,
            effective_date=dt.date(2026, 8, 2), usd_per_m_input_cache_hit=Decimal("0.20"),
            usd_per_m_input_cache_miss=Decimal("2.00"), usd_per_m_output=Decimal("10.00"),
        )
    )  # fmt: skip
    client.force_login(alice)
    body = client.get(url(scenario)).content.decode()
    assert "Moonshot kimi-k3 now costs $10.00 per M output" in body


def test_the_detail_page_runs_in_a_fixed_number_of_queries(
    client, alice, prices, make_scenario, django_assert_max_num_queries
):
    scenario = make_scenario(alice, gpu_price=prices["h100"].pk, api_price=prices["api"].pk)
    for i in range(20):
        prices["gpu"](prices["h100"].accelerator, f"3.{i:02d}", dt.date(2026, 1, 1 + i))
    client.force_login(alice)
    with django_assert_max_num_queries(16):
        assert client.get(url(scenario)).status_code == 200


def test_the_print_page_stands_alone(client, alice, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(alice)
    body = client.get(reverse("scenarios:print", args=[scenario.pk])).content.decode()
    assert 'class="print-page"' in body and "<nav>" not in body
    assert "Kimi K3 cannot run on one GPU" in body
    assert f"/scenarios/{scenario.pk}/" in body  # the permalink, printed
