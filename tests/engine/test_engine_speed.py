"""Decode and prefill, worked by hand on round numbers."""

import pytest
from engine_cases import H100, dense_model

from sizing.engine import (
    AcceleratorSpec,
    Assumptions,
    ExpertSpec,
    ModelSpec,
    Prices,
    Workload,
    decode_speed,
    expected_distinct_experts,
)
from sizing.engine.speed import peak_for

# 1 TB/s, 100 TFLOPS bf16, and efficiencies of 1 so the arithmetic stays visible.
CARD = AcceleratorSpec("round", 100, 1.0, 100, None, None)
PERFECT = Assumptions(bandwidth_efficiency=1.0, compute_efficiency=1.0)


def test_distinct_experts_touched():
    assert expected_distinct_experts(896, 16, 1) == pytest.approx(16)
    assert expected_distinct_experts(8, 2, 2) == pytest.approx(8 * (1 - 0.75**2))
    assert expected_distinct_experts(896, 16, 10_000) == pytest.approx(896)


def test_dense_decode_is_memory_bound_at_batch_one():
    # 5B params in bf16 = 10 GB read per step at 1 TB/s: 10 ms, 100 tokens/s
    model = dense_model(params=5_000_000_000, layers=10, kv_heads=1, head_dim=64)
    speed = decode_speed(model, CARD, 1, Workload(context_tokens=1, concurrency=1), PERFECT)
    kv = 10 * 2 * 64 * 2  # one token of KV
    assert speed.bytes_per_step == 10e9 + kv
    assert speed.memory_time_s == pytest.approx((10e9 + kv) / 1e12)
    assert speed.bound == "memory"
    assert speed.tokens_per_s == pytest.approx(1 / speed.memory_time_s)
    assert speed.tokens_per_s_per_user == pytest.approx(speed.tokens_per_s)
    assert speed.kv_included


def test_large_batch_turns_compute_bound():
    # 2 x 5e9 x 10,000 = 1e14 FLOP at 100 TFLOPS = 1 s, while the weights read in 10 ms
    model = dense_model(params=5_000_000_000, layers=10, kv_heads=1, head_dim=64)
    wl = Workload(context_tokens=1, concurrency=10_000)
    speed = decode_speed(model, CARD, 1, wl, PERFECT)
    assert speed.compute_time_s == pytest.approx(1.0)
    assert speed.bound == "compute"
    assert speed.tokens_per_s == pytest.approx(10_000)
    assert speed.tokens_per_s_per_user == pytest.approx(1.0)


def test_more_gpus_divide_the_step():
    model = dense_model(params=5_000_000_000, layers=10, kv_heads=1, head_dim=64)
    one = decode_speed(model, CARD, 1, Workload(), PERFECT)
    four = decode_speed(model, CARD, 4, Workload(), PERFECT)
    assert four.step_time_s == pytest.approx(one.step_time_s / 4)


def test_moe_reads_only_the_experts_touched():
    # 10 experts of 1e9 params each (all layers) + 2e9 dense; 2 active; fp8
    model = ModelSpec(
        "moe", 12_000_000_000, 4_000_000_000,
        experts=ExpertSpec(10, 2, params_per_expert=100_000_000, moe_layers=10),
        weight_format="fp8",
    )  # fmt: skip
    speed = decode_speed(model, CARD, 1, Workload(concurrency=1), PERFECT)
    assert speed.expected_experts_per_layer == pytest.approx(2)
    assert speed.weights_bytes_per_step == pytest.approx(2e9 + 2e9)
    assert not speed.kv_included  # no attention layout: KV unknown, left out and flagged
    batch4 = decode_speed(model, CARD, 1, Workload(concurrency=4), PERFECT)
    touched = 10 * (1 - 0.8**4)
    assert batch4.weights_bytes_per_step == pytest.approx(2e9 + touched * 1e9)


def test_k3_touches_about_16_experts_at_batch_one(k3):
    speed = decode_speed(k3, H100, 32, Workload(concurrency=1))
    assert speed.expected_experts_per_layer == pytest.approx(16)
    # ~ the 104B active at 0.53125 B a weight, not the 2.8T
    assert speed.weights_bytes_per_step == pytest.approx(104e9 * 0.53125, rel=1e-9)


def test_prefill_is_compute_bound():
    model = dense_model(params=5_000_000_000, layers=10, kv_heads=1, head_dim=64)
    speed = decode_speed(model, CARD, 2, Workload(prompt_tokens=1000), PERFECT)
    assert speed.prefill_s == pytest.approx(2 * 5e9 * 1000 / (2 * 100e12))


def test_tokens_per_second_per_dollar_hour():
    model = dense_model(params=5_000_000_000, layers=10, kv_heads=1, head_dim=64)
    speed = decode_speed(model, CARD, 4, Workload(), PERFECT, Prices(usd_per_gpu_hour=2.5))
    assert speed.cluster_usd_per_hour == 10.0
    assert speed.tokens_per_s_per_usd_per_hour == pytest.approx(speed.tokens_per_s / 10.0)
    assert speed.tokens_per_usd == pytest.approx(speed.tokens_per_s * 3600 / 10.0)


@pytest.mark.parametrize(
    ("weight_format", "card", "kind", "tflops"),
    [
        ("mxfp4", AcceleratorSpec("b", 192, 8, 2250, 4500, 9000), "fp4", 9000),
        ("mxfp4", H100, "fp8", 1979),  # no FP4 units: falls back to fp8
        ("fp8", H100, "fp8", 1979),
        ("bf16", H100, "bf16", 989),
        ("Q4_K", H100, "bf16", 989),  # weight-only: dequantised, multiplied in bf16
        ("fp8", AcceleratorSpec("old", 80, 2.0, 312), "bf16", 312),
        ("bf16", AcceleratorSpec("blank", 80, 2.0), "bf16", None),
    ],
)
def test_peak_follows_the_weight_format(weight_format, card, kind, tflops):
    assert peak_for(card, weight_format) == (kind, tflops)


def test_unknown_bandwidth_is_reported_not_guessed():
    card = AcceleratorSpec("no datasheet", 80)
    speed = decode_speed(dense_model(), card, 1)
    assert not speed.known
    assert "accelerator.bandwidth_tb_s" in speed.missing
    assert speed.tokens_per_s is None


def test_moe_without_active_or_expert_sizes_is_unknown():
    model = ModelSpec("moe", 10**11, experts=ExpertSpec(64, 4))
    speed = decode_speed(model, H100, 1)
    assert not speed.known
    assert "model.active_params" in speed.missing
