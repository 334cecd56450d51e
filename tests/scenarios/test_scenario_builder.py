"""The builder: the article's K3 scenario, live recompute over HTMX, field errors, saving."""

import pytest
from django.urls import reverse
from scenario_data import form_data

from scenarios.models import PUBLIC, TEAM, Scenario

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def test_it_opens_on_the_article_scenario(client, catalog):
    r = client.get(reverse("scenarios:builder"))
    body = r.content.decode()
    assert r.status_code == 200
    assert "Kimi K3 cannot run on one GPU: 1.49 TB of weights" in body
    # the weights-only floor on H100: the article's 18 at 4-bit, 19 with MXFP4's scales
    assert "floor 19 (18 idealised)" in body
    assert "32 × H100 80GB" in body  # the SGLang recipe's 4 nodes x 8
    assert "23,040 GPU-hours a month always on = $57,600" in body
    assert "25 minutes" in body  # ~1.5 TB at 1 GB/s
    assert "--tp-size 8 --ep-size 4" in body
    assert 'data-plotly="chart-break-even"' in body
    assert "vendor/plotly" in body and "js/charts.js" in body


def test_an_htmx_recompute_returns_only_the_results(client, catalog):
    r = client.post(reverse("scenarios:builder"), form_data(usd_per_gpu_hour="2.00"), **HX)
    body = r.content.decode()
    assert r.status_code == 200
    assert body.lstrip().startswith('<section id="result"')
    assert "<html" not in body and "<form" not in body
    assert "$46,080" in body  # 23,040 GPU-hours x $2.00
    assert 'id="chart-break-even"' in body  # the json_script the chart draws from


def test_it_works_without_javascript_as_a_plain_post(client, catalog):
    r = client.post(reverse("scenarios:builder"), form_data(hours_per_day="4"))
    body = r.content.decode()
    assert "<html" in body and 'id="builder"' in body
    assert "3,840 GPU-hours a month" in body  # 32 GPUs x 4 h x 30 days


def test_a_bad_field_shows_its_error_beside_it(client, catalog):
    r = client.post(reverse("scenarios:builder"), form_data(concurrency="0"), **HX)
    body = r.content.decode()
    assert 'id="err-concurrency" class="field-error" role="alert" hx-swap-oob="true">' in body
    assert "Ensure this value is greater than or equal to 1." in body
    assert "fields marked in red" in body


def test_an_engine_error_lands_on_its_field(client, catalog):
    # Llama 3.1 8B reads at most 131,072 tokens: the engine's SizingError names the context.
    r = client.post(
        reverse("scenarios:builder"),
        form_data(llm="llama-3.1-8b", context_tokens="1000000"),
        **HX,
    )
    body = r.content.decode()
    start = body.index('id="err-context_tokens"')
    assert "maximum context of 131,072" in body[start : start + 300]


def test_a_full_page_shows_the_error_beside_the_field_too(client, catalog):
    r = client.post(reverse("scenarios:builder"), form_data(utilisation_pct="150"))
    body = r.content.decode()
    start = body.index('id="err-utilisation_pct"')
    assert "less than or equal to 100" in body[start : start + 200]
    assert 'class="field invalid"' in body


def test_a_dated_price_replaces_the_typed_rate(client, prices):
    data = form_data(gpu_price=prices["h100"].pk, usd_per_gpu_hour="")
    body = client.post(reverse("scenarios:builder"), data, **HX).content.decode()
    assert "$2.99 per GPU-hour" in body
    assert "from Lambda" in body and "2026-07-20" in body


def test_a_price_for_another_accelerator_is_refused(client, prices):
    data = form_data(gpu_price=prices["h200"].pk)
    body = client.post(reverse("scenarios:builder"), data, **HX).content.decode()
    start = body.index('id="err-gpu_price"')
    assert "This price is for the H200 141GB" in body[start : start + 300]


def test_the_api_price_pick_fills_the_three_rates(client, prices):
    data = form_data(
        api_price=prices["api"].pk,
        api_usd_per_m_output="",
        monthly_input_m_tokens="1000",
        cached_input_pct="80",
    )
    body = client.post(reverse("scenarios:builder"), data, **HX).content.decode()
    # 800 M hits x $0.30 + 200 M misses x $3.00 + 960 M x $15.00
    assert "$240" in body and "$600" in body and "$14,400" in body and "$15,240" in body


def test_the_page_offers_the_current_prices_of_the_accelerator(client, prices):
    body = client.get(reverse("scenarios:builder")).content.decode()
    assert "Lambda (On-demand): $2.99/GPU-h as of 2026-07-20" in body
    assert "$3.29" not in body  # superseded
    assert "$3.79" not in body  # an H200 price
    assert "Moonshot kimi-k3: $0.30 hit / $3.00 miss / $15.00 out per M" in body


def test_query_parameters_preset_the_fields(client, catalog):
    r = client.get(reverse("scenarios:builder") + "?llm=qwen3-32b&accelerator=rtx-4090-24gb")
    assert r.context["form"].cleaned_data["llm"].slug == "qwen3-32b"
    assert "RTX 4090 24GB" in r.content.decode()


def test_saving_needs_sign_in(client, catalog):
    r = client.post(reverse("scenarios:builder"), form_data(save="1", name="K3"))
    assert r.status_code == 302 and reverse("login") in r["Location"]
    assert not Scenario.objects.exists()


def test_alice_saves_and_shares_with_her_team(client, alice, alices_team, prices):
    client.force_login(alice)
    data = form_data(
        save="1",
        name="K3 on H100",
        tags="K3, article",
        visibility=TEAM,
        team=alices_team.pk,
        gpu_price=prices["h100"].pk,
    )
    r = client.post(reverse("scenarios:builder"), data)
    scenario = Scenario.objects.get()
    assert r.status_code == 302 and r["Location"] == reverse("scenarios:detail", args=[scenario.pk])
    assert (scenario.owner, scenario.team, scenario.visibility) == (alice, alices_team, TEAM)
    assert scenario.tags == "k3 article"
    assert scenario.gpus == 32 and scenario.tier1_usd_per_month == pytest.approx(32 * 720 * 2.99)
    assert scenario.snapshot["gpu_price"]["effective_date"] == "2026-07-20"
    assert scenario.prices_as_of.isoformat() == "2026-07-20"


def test_a_save_with_errors_keeps_the_page(client, alice, catalog):
    client.force_login(alice)
    r = client.post(reverse("scenarios:builder"), form_data(save="1", name=""))
    assert r.status_code == 200 and not Scenario.objects.exists()
    assert "This field is required." in r.content.decode()


def test_sharing_with_a_team_needs_the_team(client, alice, catalog):
    client.force_login(alice)
    r = client.post(reverse("scenarios:builder"), form_data(save="1", name="K3", visibility=TEAM))
    assert "Pick the team to share it with." in r.content.decode()
    assert not Scenario.objects.exists()


def test_alice_cannot_share_with_a_team_she_is_not_on(client, alice, charlie, catalog):
    other = charlie.teams.get()
    client.force_login(alice)
    r = client.post(
        reverse("scenarios:builder"),
        form_data(save="1", name="K3", visibility=TEAM, team=other.pk),
    )
    assert r.status_code == 200 and not Scenario.objects.exists()


def test_the_owner_edits_a_saved_scenario(client, alice, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(alice)
    r = client.get(reverse("scenarios:edit", args=[scenario.pk]))
    assert r.context["form"]["llm"].value() == "kimi-k3"
    data = form_data(save="1", name="K3, 4 hours a day", hours_per_day="4", visibility=PUBLIC)
    client.post(reverse("scenarios:edit", args=[scenario.pk]), data)
    scenario.refresh_from_db()
    assert scenario.name == "K3, 4 hours a day" and scenario.visibility == PUBLIC
    assert scenario.tier1_usd_per_month == pytest.approx(32 * 4 * 30 * 2.5)
    assert Scenario.objects.count() == 1


def test_bob_cannot_edit_alices_team_scenario(client, alice, bob, alices_team, make_scenario):
    scenario = make_scenario(alice, visibility=TEAM, team=alices_team)
    client.force_login(bob)
    assert client.get(reverse("scenarios:edit", args=[scenario.pk])).status_code == 403
    r = client.post(reverse("scenarios:edit", args=[scenario.pk]), form_data(save="1", name="x"))
    assert r.status_code == 403
    scenario.refresh_from_db()
    assert scenario.name == "K3 on H100"


def test_charlie_gets_404_even_with_a_crafted_htmx_request(client, alice, charlie, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(charlie)
    url = reverse("scenarios:edit", args=[scenario.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, form_data(), **HX).status_code == 404
    assert client.post(url, form_data(save="1", name="mine now")).status_code == 404


def test_the_recompute_runs_in_a_fixed_number_of_queries(
    client, prices, alice, make_scenario, django_assert_max_num_queries
):
    for i in range(30):
        make_scenario(alice, name=f"s{i}")
        prices["gpu"](prices["h100"].accelerator, f"2.{i:02d}", prices["h100"].effective_date)
    client.force_login(alice)
    with django_assert_max_num_queries(16):
        r = client.post(reverse("scenarios:builder"), form_data(), **HX)
    assert r.status_code == 200
    with django_assert_max_num_queries(22):
        assert client.get(reverse("scenarios:builder")).status_code == 200
