"""The contract the pages and the JSON API share: validate, evaluate, save, clone, delete."""

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from scenario_data import K3, form_data

from scenarios import services
from scenarios.models import PRIVATE, TEAM, Scenario
from sizing.engine.errors import SizingError
from sizing.models import LLMModel

pytestmark = pytest.mark.django_db


def test_inputs_from_a_dict_of_numbers_and_defaults(catalog):
    inputs = services.scenario_inputs_from_dict(
        {"llm": "qwen3-32b", "usd_per_gpu_hour": 3, "concurrency": 4, "api_usd_per_m_output": None}
    )
    assert inputs.llm.slug == "qwen3-32b" and inputs.accelerator.slug == "h100-80gb"
    assert inputs.prices.usd_per_gpu_hour == 3.0 and inputs.prices.api_usd_per_m_input_miss == 3.0
    assert inputs.workload.concurrency == 4 and inputs.workload.context_tokens == 8192
    assert inputs.assumptions.runtime_overhead_gb == 2.0  # the article's "about 2 GB"
    assert inputs.prices.api_usd_per_m_output is None  # left out: the API tier is not costed
    assert inputs.raw["llm"] == "qwen3-32b" and inputs.raw["concurrency"] == 4


def test_bad_inputs_raise_a_validation_error_by_field(catalog):
    with pytest.raises(ValidationError) as caught:
        services.scenario_inputs_from_dict({"llm": "no-such-model", "concurrency": "many"})
    assert set(caught.value.message_dict) == {"llm", "concurrency"}


def test_percent_and_million_fields_become_engine_units(catalog):
    inputs = services.scenario_inputs_from_dict(
        form_data(monthly_input_m_tokens=500, cached_input_pct=80, utilisation_pct=50)
    )
    wl = inputs.workload
    assert (wl.monthly_input_tokens, wl.cached_input_share, wl.utilisation) == (5e8, 0.8, 0.5)


def test_evaluate_returns_the_result_and_a_snapshot_of_what_it_used(catalog):
    result, snapshot = services.scenario_evaluate(
        inputs=services.scenario_inputs_from_dict(form_data())
    )
    assert result.weights_bytes == pytest.approx(1.4875e12)  # 2.8T x 0.53125 B (MXFP4)
    assert result.min_gpus_for_weights == 19 and result.min_gpus_for_weights_idealised == 18
    assert snapshot["model"]["total_params"] == 2_800_000_000_000
    assert snapshot["model_meta"]["figures_as_of"] == "2026-07-20"
    assert snapshot["prices"]["usd_per_gpu_hour"] == 2.5
    assert snapshot["gpu_price"] is None  # typed, not a dated row


def test_the_snapshot_keeps_a_scenario_reproducible(alice, make_scenario):
    scenario = make_scenario(alice)
    LLMModel.objects.filter(slug="kimi-k3").update(total_params=1_000_000_000_000)
    result = services.scenario_reevaluate(scenario=scenario)
    assert result.weights_bytes == pytest.approx(1.4875e12)
    assert result.tier1_usd_per_month == pytest.approx(57_600)


def test_an_engine_error_names_the_field(catalog):
    inputs = services.scenario_inputs_from_dict(form_data(llm="llama-3.1-8b", context_tokens=10**6))
    with pytest.raises(SizingError) as caught:
        services.scenario_evaluate(inputs=inputs)
    assert caught.value.field == "workload.context_tokens"


def test_create_stores_the_key_figures(alice, make_scenario):
    s = make_scenario(alice, tags="K3, Article k3")
    assert (s.model_name, s.accelerator_name, s.gpus) == ("Kimi K3", "H100 80GB", 32)
    assert s.tier1_usd_per_month == pytest.approx(57_600)
    assert s.tier3_usd_per_month == pytest.approx(14_400)  # 960 M x $15.00
    assert s.break_even_output_tokens_per_month == pytest.approx(3.84e9)
    assert s.tags == "k3 article" and s.visibility == PRIVATE
    assert s.inputs["llm"] == "kimi-k3" and s.prices_as_of is not None


def test_sharing_needs_a_team_the_owner_is_on(alice, charlie, catalog):
    inputs = services.scenario_inputs_from_dict(form_data())
    with pytest.raises(ValidationError):
        services.scenario_create(owner=alice, inputs=inputs, name="x", visibility=TEAM)
    with pytest.raises(ValidationError):
        services.scenario_create(
            owner=alice, inputs=inputs, name="x", visibility=TEAM, team=charlie.teams.get()
        )
    assert not Scenario.objects.exists()


def test_update_changes_meta_and_recomputes_new_inputs(alice, alices_team, make_scenario):
    s = make_scenario(alice)
    services.scenario_update(scenario=s, name="renamed", visibility=TEAM, team=alices_team)
    assert (s.name, s.visibility) == ("renamed", TEAM) and s.tier1_usd_per_month == 57_600
    new = services.scenario_inputs_from_dict(form_data(usd_per_gpu_hour=2))
    services.scenario_update(scenario=s, inputs=new)
    s.refresh_from_db()
    assert s.tier1_usd_per_month == pytest.approx(46_080) and s.name == "renamed"
    with pytest.raises(TypeError):
        services.scenario_update(scenario=s, owner=alice)


def test_clone_is_a_private_copy_with_the_same_snapshot(alice, bob, alices_team, make_scenario):
    s = make_scenario(alice, visibility=TEAM, team=alices_team, tags="k3")
    copy = services.scenario_clone(scenario=s, owner=bob)
    assert (copy.owner, copy.visibility, copy.team) == (bob, PRIVATE, None)
    assert copy.name == "Copy of K3 on H100" and copy.snapshot == s.snapshot
    assert copy.tags == "k3" and copy.tier1_usd_per_month == s.tier1_usd_per_month


def test_delete(alice, make_scenario):
    s = make_scenario(alice)
    services.scenario_delete(scenario=s)
    assert not Scenario.objects.exists()


def test_a_dated_price_is_recorded_with_its_date(alice, prices, make_scenario):
    s = make_scenario(alice, gpu_price=prices["h100"].pk, api_price=prices["api"].pk)
    assert s.snapshot["gpu_price"]["usd_per_gpu_hour"] == 2.99
    assert s.snapshot["api_price"]["model_id"] == "kimi-k3"
    assert s.prices_as_of == dt.date(2026, 7, 20)
    assert s.tier1_usd_per_month == pytest.approx(32 * 720 * 2.99)


def test_k3_is_the_article_scenario():
    assert K3["usd_per_gpu_hour"] == "2.50" and K3["api_usd_per_m_output"] == "15.00"
