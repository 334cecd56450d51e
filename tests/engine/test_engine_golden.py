"""Spec section 6: every figure in the article comes out of the engine exactly."""

import pytest
from engine_cases import ARTICLE_CARDS, ARTICLE_PRICES, GB300, H100, dense_model

from sizing.engine import (
    KVEstimate,
    Prices,
    Scenario,
    Workload,
    api_monthly_cost,
    break_even,
    cold_start_seconds,
    evaluate,
    floor_table,
    gpu_hours_per_month,
    kv_estimate,
    kv_profile,
    one_card_pick,
    plan_layout,
    recommend_layout,
    tier1_cost,
    weights,
    weights_bytes,
)
from sizing.engine.fmt import GIB, KIB, fmt_bytes, fmt_duration, fmt_int, fmt_usd


@pytest.mark.parametrize(
    ("weight_format", "bytes_per_weight", "expected_bytes", "expected_text"),
    [
        ("bf16", 2, 5.6e12, "5.6 TB"),
        ("fp8", 1, 2.8e12, "2.8 TB"),
        ("4-bit", 0.5, 1.4e12, "1.4 TB"),
        ("2-bit", 0.25, 0.7e12, "700 GB"),
    ],
)
def test_k3_weights_at_each_bytes_per_weight(
    k3, weight_format, bytes_per_weight, expected_bytes, expected_text
):
    result = weights(k3, weight_format)
    assert result.bytes_per_weight == bytes_per_weight
    assert result.weights_bytes == expected_bytes
    assert weights_bytes(k3, weight_format) == expected_bytes
    assert fmt_bytes(result.weights_bytes) == expected_text


def test_mxfp4_scales_add_six_and_a_quarter_percent(k3):
    result = weights(k3)  # as shipped
    assert result.weight_format == "mxfp4"
    assert result.weights_bytes == 1.4875e12
    assert result.idealised_format == "4-bit"
    assert result.idealised_bytes == 1.4e12
    assert result.scale_overhead_share == pytest.approx(0.0625, rel=1e-12)
    # "closer to 1.5 TB than to exactly 1.4 TB"
    assert abs(result.weights_bytes - 1.5e12) < abs(result.weights_bytes - 1.4e12)
    assert "6.25%" in result.note


@pytest.mark.parametrize(
    ("card", "gpus_at_4bit", "gpus_with_mxfp4_scales"),
    [(ARTICLE_CARDS[0], 18, 19), (ARTICLE_CARDS[1], 10, 11), (ARTICLE_CARDS[2], 8, 8),
     (ARTICLE_CARDS[3], 5, 6)],
)  # fmt: skip
def test_weights_only_floor(k3, card, gpus_at_4bit, gpus_with_mxfp4_scales):
    (idealised,) = floor_table(k3, [card], weight_format="4-bit")
    assert idealised.min_gpus == gpus_at_4bit
    (shipped,) = floor_table(k3, [card])
    assert shipped.min_gpus == gpus_with_mxfp4_scales
    # both are shown side by side, and why they differ
    assert shipped.min_gpus_idealised == gpus_at_4bit
    assert shipped.idealised_weights_bytes == 1.4e12


def test_floor_table_covers_every_card_in_order(k3):
    rows = floor_table(k3, ARTICLE_CARDS, weight_format="4-bit")
    assert [(r.memory_gb, r.min_gpus) for r in rows] == [(80, 18), (141, 10), (192, 8), (288, 5)]


def test_worked_kv_example_is_128_kib_per_token():
    # 64 layers, 8 KV heads, head dim 128, fp8: 2 x 64 x 8 x 128 x 1
    profile = kv_profile(dense_model(layers=64, kv_heads=8, head_dim=128, kv_dtype="fp8"))
    assert profile.kv_bytes_per_token == 131_072
    assert profile.kv_bytes_per_token == 128 * KIB
    assert fmt_int(profile.kv_bytes_per_token) == "131,072"


@pytest.mark.parametrize(
    ("context_tokens", "gib_per_user"),
    [(8 * 1024, 1), (32 * 1024, 4), (128 * 1024, 16), (2**20, 128)],
)
def test_worked_kv_example_per_user(context_tokens, gib_per_user):
    model = dense_model(layers=64, kv_heads=8, head_dim=128, kv_dtype="fp8")
    estimate = kv_estimate(model, Workload(context_tokens=context_tokens))
    assert estimate.kv_bytes_per_user == gib_per_user * GIB
    assert estimate.kv_gib_per_user == gib_per_user


@pytest.mark.parametrize(
    ("gpus", "hours_per_day", "gpu_hours", "usd", "usd_text"),
    [
        (1, 24, 720, 1_800, "$1,800"),
        (8, 4, 960, 2_400, "$2,400"),
        (8, 24, 5_760, 14_400, "$14,400"),
        (32, 24, 23_040, 57_600, "$57,600"),
    ],
)
def test_rent_by_the_hour(gpus, hours_per_day, gpu_hours, usd, usd_text):
    assert gpu_hours_per_month(gpus, hours_per_day, 30) == gpu_hours
    cost = tier1_cost(gpus, 2.50, hours_per_day, 30)
    assert cost.gpu_hours_per_month == gpu_hours
    assert cost.usd_per_month == usd
    assert fmt_usd(cost.usd_per_month) == usd_text


def test_always_on_is_720_hours_by_default():
    assert gpu_hours_per_month(1) == 720
    assert Workload().hours_per_day * Workload().days_per_month == 720


def test_cold_start_downloading_1_5_tb_at_1_gb_s_is_25_minutes():
    seconds = cold_start_seconds(1.5e12, 1.0)
    assert seconds == 1500
    assert fmt_duration(seconds) == "25 minutes"
    cost = tier1_cost(8, 2.50, checkpoint_bytes=1.5e12, download_gb_s=1.0)
    assert cost.cold_start_s == 1500
    assert cost.cold_start_usd == pytest.approx(8 * 1500 / 3600 * 2.50)


def test_break_even_is_960_m_output_tokens_a_month():
    result = break_even(14_400, 15.00)
    assert result.output_tokens_per_month == 960e6
    assert result.output_tokens_per_day == 32e6  # "about 30 million a day"


@pytest.mark.parametrize(
    ("input_tokens", "cached_share", "output_tokens", "usd"),
    [
        (1e6, 1.0, 0, 0.30),  # input, cache hit
        (1e6, 0.0, 0, 3.00),  # input, cache miss
        (0, 0.0, 1e6, 15.00),  # output
        (10e6, 0.9, 1e6, 9e6 * 0.30 / 1e6 + 1e6 * 3.00 / 1e6 + 15.00),
        (960e6 * 0, 0.0, 960e6, 14_400),  # the break-even volume buys the node's month
    ],
)
def test_api_price_arithmetic(input_tokens, cached_share, output_tokens, usd):
    cost = api_monthly_cost(input_tokens, cached_share, output_tokens, ARTICLE_PRICES)
    assert cost is not None
    assert cost.usd_per_month == pytest.approx(usd, rel=1e-12)


def test_gateway_is_a_fixed_monthly_cost():
    prices = Prices(api_usd_per_m_output=15.0, gateway_usd_per_month=20.0)
    cost = api_monthly_cost(0, 0, 1e6, prices)
    assert cost is not None
    assert cost.usd_per_month == 35.0
    assert cost.usd_gateway == 20.0


def test_two_bit_k3_is_still_more_than_twice_the_largest_card(k3):
    two_bit = weights_bytes(k3, "2-bit")
    assert two_bit == 0.7e12
    assert two_bit > 2 * GB300.memory_gb * 1e9


def test_sglang_recipe_four_nodes_of_eight_h100(k3):
    layout = plan_layout(k3, H100, 32)
    assert layout.fits
    assert (layout.gpus, layout.nodes) == (32, 4)
    assert layout.aggregate_memory_gb == 2_560
    assert layout.tp * layout.ep == 32
    assert "--tp-size 8 --ep-size 4" in layout.sglang_command
    assert "--nnodes 4" in layout.sglang_command
    # the weights-only floor is 18-19 cards; the recipe is well above it
    assert floor_table(k3, [H100])[0].min_gpus < layout.gpus


def test_recommended_h100_layout_for_k3_is_the_sglang_recipe(k3):
    # 24 GPUs would hold the weights, but 896 experts do not split over 3 nodes' EP ranks
    layout = recommend_layout(k3, H100)
    assert (layout.gpus, layout.nodes, layout.tp, layout.ep) == (32, 4, 8, 4)
    assert layout.aggregate_memory_gb == 2_560
    assert "24 GPUs" in layout.note


def test_moonshots_64_accelerator_supernode_fits_too(k3):
    assert plan_layout(k3, H100, 64).fits


@pytest.mark.parametrize(
    ("memory_gb", "largest_dense_4bit"), [(16, "7B"), (24, "14B"), (48, "32B"), (80, "70B")]
)
def test_one_card_list_at_4_bit(memory_gb, largest_dense_4bit):
    assert one_card_pick(memory_gb).largest_dense_4bit == largest_dense_4bit


def test_a_30b_class_moe_at_8_bit_fits_80_gb():
    pick = one_card_pick(80)
    assert pick.moe_8bit_fits
    assert "30B-class MoE at 8-bit" in pick.fits


def test_k3_kv_is_unknown_and_says_how_to_measure(k3):
    estimate = kv_estimate(k3, Workload())
    assert isinstance(estimate, KVEstimate)
    assert not estimate.known
    assert estimate.kv_bytes_per_user is None
    assert "model.attention[1].kv_lora_rank" in estimate.missing
    assert "model.attention[0].state_heads" in estimate.missing
    assert "--max-model-len" in estimate.how_to_measure
    assert "nvidia-smi" in estimate.how_to_measure


def test_k3_verdict_on_one_gpu(article_scenario):
    result = evaluate(article_scenario, ARTICLE_CARDS)
    assert result.verdicts.single_gpu == (
        "K3 cannot run on one GPU: 1.49 TB of weights, the largest card holds 288 GB."
    )
    assert "does not run K3" in result.verdicts.tier2


def test_k3_scenario_end_to_end(k3):
    scenario = Scenario(k3, H100, Workload(monthly_output_tokens=960e6), ARTICLE_PRICES)
    result = evaluate(scenario, ARTICLE_CARDS)
    assert result.weights_bytes == 1.4875e12
    assert result.min_gpus_for_weights == 19
    assert result.min_gpus_for_weights_idealised == 18
    assert not result.kv_known and result.kv_bytes_per_token is None
    assert result.layout.gpus == 32 and not result.layout.kv_included
    assert result.tier1_usd_per_month == 57_600
    assert result.tier3_usd_per_month == 14_400
    assert not result.tier2.runs_scenario_model
