"""Tier 1 capacity and cost per token, tier 2 fits and offload, break-even steps and series."""

import time

import pytest
from engine_cases import H100, dense_model, k3_model, qwen_7b

from sizing.engine import (
    AcceleratorSpec,
    Prices,
    api_monthly_cost,
    break_even,
    break_even_series,
    tier1_cost,
    tier2_fit,
    tier2_fits,
)
from sizing.engine.tiers import crossings, selfhost_usd


def test_tier1_capacity_and_cost_per_million_at_a_utilisation():
    # 1,000 tokens/s at 50% for 720 h = 1.296e9 tokens; $14,400 / 1,296 M = $11.11 per M
    cost = tier1_cost(8, 2.50, 24, 30, tokens_per_s=1000, utilisation=0.5)
    assert cost.output_tokens_per_month == pytest.approx(1000 * 0.5 * 720 * 3600)
    assert cost.usd_per_m_output == pytest.approx(14_400 / 1296)
    assert cost.tokens_per_s_per_usd_per_hour == pytest.approx(500 / 20)


def test_tier1_without_a_price_still_counts_hours():
    cost = tier1_cost(8, None)
    assert cost.gpu_hours_per_month == 5760
    assert cost.usd_per_month is None and cost.cold_start_usd is None


def test_small_model_fits_one_card_with_context_to_spare():
    fit = tier2_fit(qwen_7b(), H100, context_tokens=32_768)
    assert fit.fits and fit.offload is None
    assert fit.weights_gb == pytest.approx(15.24)
    assert fit.needed_gb == pytest.approx(15.24 + 32_768 * 57_344 / 1e9 + 2)
    # what is left after weights + 2 GB, at 57,344 B a token
    assert fit.max_context_tokens == (80e9 - 15.24e9 - 2e9) // 57_344


def test_max_context_is_capped_by_the_model():
    model = dense_model(params=1_000_000_000, layers=4, kv_heads=1, head_dim=64)
    capped = type(model)(**{**model.__dict__, "max_context_tokens": 32_768})
    assert tier2_fit(capped, H100).max_context_tokens == 32_768


def test_k3_on_one_card_offloads_at_ram_speed():
    card = AcceleratorSpec("GB300 288GB", 288, 8.0)
    fit = tier2_fit(k3_model(), card, ram_bandwidth_gb_s=60)
    assert not fit.fits and not fit.kv_known
    off = fit.offload
    assert off is not None
    assert off.gpu_bytes == pytest.approx(286e9)  # the card less 2 GB overhead
    assert off.ram_bytes == pytest.approx(1.4875e12 - 286e9)
    assert off.bytes_read_per_token == pytest.approx(104e9 * 0.53125)
    share = 286e9 / 1.4875e12
    expected = 55.25e9 * share / 8e12 + 55.25e9 * (1 - share) / 60e9
    assert off.seconds_per_token == pytest.approx(expected)


def test_dense_offload_reads_every_weight():
    card = AcceleratorSpec("4090", 24, 1.0)
    fit = tier2_fit(dense_model(params=32_000_000_000), card, ram_bandwidth_gb_s=50)
    assert fit.offload is not None
    assert fit.offload.bytes_read_per_token == 64e9
    on_gpu = 24e9 - 2e9 - fit.kv_gb * 1e9
    expected = on_gpu / 1e12 + (64e9 - on_gpu) / 50e9
    assert fit.offload.seconds_per_token == pytest.approx(expected)


def test_tier2_list_keeps_the_order():
    fits = tier2_fits([qwen_7b(), dense_model(params=70_000_000_000)], H100)
    assert [f.fits for f in fits] == [True, False]


def test_missing_api_price_gives_no_cost():
    assert api_monthly_cost(1e6, 0.5, 1e6, Prices(api_usd_per_m_output=15.0)) is None
    assert api_monthly_cost(0, 0, 1e6, Prices(api_usd_per_m_output=15.0)) is not None


def test_effective_output_price_includes_the_input():
    prices = Prices(api_usd_per_m_input_hit=0.3, api_usd_per_m_input_miss=3.0,
                    api_usd_per_m_output=15.0)  # fmt: skip
    cost = api_monthly_cost(10e6, 0.5, 1e6, prices)
    assert cost is not None
    assert cost.usd_per_m_output_effective == pytest.approx(15 + 5 * 0.3 + 5 * 3.0)


def test_break_even_never_when_a_full_replica_costs_more_than_the_api():
    # one replica serves 500 M tokens a month; the API sells them for $7,500 < $14,400
    result = break_even(14_400, 15.0, replica_output_tokens_per_month=500e6)
    assert result.output_tokens_per_month is None
    assert "500,000,000" in result.reason


def test_break_even_with_gateway():
    result = break_even(14_400, 15.0, gateway_usd_per_month=400)
    assert result.output_tokens_per_month == pytest.approx(14_000 / 15e-6)


def test_selfhost_is_a_step_function():
    assert selfhost_usd(0, 14_400, 1e9) == 14_400
    assert selfhost_usd(1e9, 14_400, 1e9) == 14_400
    assert selfhost_usd(1e9 + 1, 14_400, 1e9) == 28_800
    assert selfhost_usd(5e12, 14_400, None) == 14_400


def test_crossings_alternate_at_each_replica_step():
    # 1.2 B tokens a replica: API overtakes at 960 M, a second replica jumps back above it at
    # 1.2 B, the API catches up again at 1.92 B
    found = crossings(14_400, 15.0, 0.0, 1.2e9, 2e9)
    assert found == pytest.approx((960e6, 1.2e9, 1.92e9))


def test_series_has_the_points_and_the_crossing():
    series = break_even_series(14_400, 15.0, 0.0, None, points=500, max_output_tokens=2e9)
    assert len(series.points) == 500
    assert series.points[0] == (0.0, 0.0, 14_400)
    assert series.points[-1][0] == pytest.approx(2e9)
    assert series.crossings == pytest.approx((960e6,))


def test_series_of_500_points_in_under_5_ms():
    break_even_series(14_400, 15.0, 20.0, 1.5e9, points=500)
    best = min(_timed(lambda: break_even_series(14_400, 15.0, 20.0, 1.5e9, points=500))
               for _ in range(20))  # fmt: skip
    assert best < 0.005


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
