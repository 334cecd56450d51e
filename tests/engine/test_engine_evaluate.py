"""evaluate(): every figure in one frozen result, serialisable, with verdicts in words."""

import json
from dataclasses import FrozenInstanceError, asdict

import pytest
from engine_cases import ARTICLE_CARDS, ARTICLE_PRICES, H100, k3_model, qwen_7b

from sizing.engine import (
    AcceleratorSpec,
    Assumptions,
    ModelSpec,
    Prices,
    Scenario,
    ScenarioResult,
    Workload,
    break_even_series_for,
    evaluate,
)


def test_result_is_frozen_and_serialises(article_scenario):
    result = evaluate(article_scenario, ARTICLE_CARDS)
    assert isinstance(result, ScenarioResult)
    with pytest.raises(FrozenInstanceError):
        result.weights_bytes = 0  # type: ignore[misc]
    data = asdict(result)
    text = json.dumps(data)
    assert json.loads(text)["layout"]["gpus"] == 32
    assert data["verdicts"]["single_gpu"].startswith("K3 cannot run on one GPU")
    assert len(data["floor"]) == 4


def test_every_figure_is_there(article_scenario):
    result = evaluate(article_scenario, ARTICLE_CARDS)
    assert result.weights_bytes == 1.4875e12
    assert result.min_gpus_for_weights == 19
    assert result.layout.fits
    assert result.decode_tokens_per_s is not None and result.decode_tokens_per_s > 0
    assert result.tier1 is not None and result.tier1_usd_per_month == 57_600
    assert result.tier1.cold_start_s == 1487.5
    assert result.tier3 is not None
    assert result.break_even is not None
    assert [r.min_gpus for r in result.floor] == [19, 11, 8, 6]
    assert [r.min_gpus_idealised for r in result.floor] == [18, 10, 8, 5]


def test_verdicts_read_like_a_report(article_scenario):
    v = evaluate(article_scenario, ARTICLE_CARDS).verdicts
    assert (
        v.single_gpu
        == "K3 cannot run on one GPU: 1.49 TB of weights, the largest card holds 288 GB."
    )
    assert "32 x H100 80GB (4 nodes, TP 8 x EP 4; weights and overhead only" in v.tier1
    assert "23,040 GPU-hours a month always on = $57,600 at $2.50 per GPU-hour" in v.tier1
    assert "25 minutes" in v.tier1
    assert "KV cache is unknown" in v.tier1
    assert v.tier2.startswith("This tier does not run K3")
    assert "70B dense model at 4-bit (or a 30B-class MoE at 8-bit)" in v.tier2
    assert "seconds a token" in v.tier2


def test_break_even_verdict_for_the_article_node():
    # 8 GPUs always on: 8 x B200 at $2.50 = $14,400; $15.00 per M output -> 960 M a month
    b200 = ARTICLE_CARDS[2]
    model = ModelSpec("dense 1T", 1_000_000_000_000, weight_format="fp8")
    workload = Workload(concurrency=256)  # busy enough for one node to serve 960 M a month
    scenario = Scenario(model, b200, workload, Prices(2.5, api_usd_per_m_output=15.0))
    result = evaluate(scenario)
    assert result.layout.gpus == 8
    assert result.tier1_usd_per_month == 14_400
    assert result.break_even_output_tokens_per_month == 960e6
    assert "960 M output tokens a month" in result.verdicts.break_even
    assert "about 32 M a day" in result.verdicts.break_even


def test_a_small_model_runs_in_tier_2():
    scenario = Scenario(qwen_7b(), AcceleratorSpec("RTX 4090", 24, 1.008), Workload())
    result = evaluate(scenario)
    assert result.tier2.runs_scenario_model
    assert result.verdicts.single_gpu.startswith("Qwen2.5-7B's weights fit on one GPU")
    assert result.verdicts.single_gpu.endswith("the RTX 4090 holds 24 GB.")  # the chosen card
    assert result.verdicts.tier2.startswith("Qwen2.5-7B fits on one RTX 4090")
    assert "Add the API" in result.verdicts.tier3
    assert result.tier1 is not None and result.tier1.usd_per_month is None


def test_break_even_series_for_a_result():
    b200 = ARTICLE_CARDS[2]
    model = ModelSpec("dense 1T", 1_000_000_000_000, weight_format="fp8")
    scenario = Scenario(
        model, b200, Workload(concurrency=256), Prices(2.5, api_usd_per_m_output=15.0)
    )
    series = break_even_series_for(evaluate(scenario), points=50)
    assert series is not None and len(series.points) == 50
    assert series.crossings[0] == pytest.approx(960e6)


def test_no_break_even_series_without_prices(k3):
    assert break_even_series_for(evaluate(Scenario(k3, H100))) is None


def test_tier2_models_are_listed(article_scenario):
    result = evaluate(article_scenario, (), tier2_models=[qwen_7b()])
    assert [f.model_name for f in result.tier2.models] == ["Qwen2.5-7B"]
    assert result.tier2.models[0].fits


def test_nothing_fits_still_evaluates(k3):
    tiny = AcceleratorSpec("tiny", 16, 0.5)
    scenario = Scenario(k3, tiny, Workload(), ARTICLE_PRICES, Assumptions(max_nodes=4))
    result = evaluate(scenario)
    assert not result.layout.fits
    assert result.speed is None and result.tier1 is None and result.break_even is None
    assert result.verdicts.tier1.startswith("Renting does not work on tiny")
    assert "Break-even needs" in result.verdicts.break_even


def test_same_inputs_same_result():
    scenario = Scenario(k3_model(), H100, Workload(), ARTICLE_PRICES)
    assert evaluate(scenario) == evaluate(Scenario(k3_model(), H100, Workload(), ARTICLE_PRICES))


def test_a_unified_memory_machine_is_not_the_largest_card(article_scenario):
    """A 512 GB Mac Studio is a whole computer; the article's "largest card" is the 288 GB one."""
    mac = AcceleratorSpec(name="Mac Studio 512GB", memory_gb=512, kind="unified")
    result = evaluate(article_scenario, [mac, *ARTICLE_CARDS])
    assert result.verdicts.single_gpu == (
        "K3 cannot run on one GPU: 1.49 TB of weights, the largest card holds 288 GB."
    )


def test_the_single_gpu_verdict_names_the_chosen_card_when_the_weights_miss_it():
    small = AcceleratorSpec("RTX 4060 Ti", 8, 0.288)
    big = AcceleratorSpec("B200", 192, 8.0)
    scenario = Scenario(qwen_7b(), small, Workload())

    verdict = evaluate(scenario, catalog=[small, big]).verdicts.single_gpu

    assert verdict.startswith("Qwen2.5-7B's weights fit on one GPU, but not on one RTX 4060 Ti:")
    assert verdict.endswith("the RTX 4060 Ti holds 8 GB and the B200 192 GB.")
