"""KV cache per attention kind, worked by hand."""

import pytest
from engine_cases import dense_model

from sizing.engine import AttentionGroup, ModelSpec, Workload, kv_estimate, kv_profile
from sizing.engine.kv import bytes_per_user, max_context_tokens


def _model(*groups: AttentionGroup, kv_dtype: str = "bf16") -> ModelSpec:
    return ModelSpec("m", 1_000_000_000, attention=groups, kv_dtype=kv_dtype)


def test_full_attention_gqa():
    # Llama-3.1-70B: 80 layers, 8 KV heads x 128, bf16 -> 2 x 8 x 128 x 2 B x 80 = 327,680 B
    profile = kv_profile(dense_model(layers=80, kv_heads=8, head_dim=128))
    assert profile.known
    assert profile.kv_bytes_per_token == 327_680
    assert profile.state_bytes_per_sequence == 0
    assert bytes_per_user(profile, 1000) == 327_680_000


def test_workload_kv_dtype_overrides_the_models():
    model = dense_model(layers=64, kv_heads=8, head_dim=128, kv_dtype="bf16")
    assert kv_profile(model).kv_bytes_per_token == 262_144
    assert kv_estimate(model, Workload(kv_dtype="fp8")).kv_bytes_per_token == 131_072


def test_mla_deepseek_v3():
    # 61 layers x (kv_lora_rank 512 + rope 64) = 35,136 elements a token: one latent, no x2
    model = _model(AttentionGroup("mla", 61, kv_lora_rank=512, qk_rope_head_dim=64))
    assert kv_profile(model).kv_bytes_per_token == 61 * 576 * 2 == 70_272
    assert kv_profile(model, "fp8").kv_bytes_per_token == 35_136


def test_sliding_window_grows_until_the_window():
    # gpt-oss-120b: 18 sliding layers (window 128) + 18 full, 8 KV heads x 64, bf16
    per_layer = 2 * 8 * 64 * 2  # 2,048 B a token a layer
    model = _model(
        AttentionGroup("sliding", 18, kv_heads=8, head_dim=64, window_tokens=128),
        AttentionGroup("full", 18, kv_heads=8, head_dim=64),
    )
    profile = kv_profile(model)
    assert profile.kv_bytes_per_token == 36 * per_layer  # below the window every layer grows
    assert bytes_per_user(profile, 100) == 100 * 36 * per_layer
    assert bytes_per_user(profile, 8192) == 8192 * 18 * per_layer + 128 * 18 * per_layer
    assert bytes_per_user(profile, 8192) == 306_708_480


def test_linear_state_is_fixed_per_sequence():
    # 3 layers, 2 heads, key 4 x value 8, 10 conv elements, fp32: (2*4*8 + 10) * 4 B * 3
    model = _model(
        AttentionGroup(
            "linear", 3, state_heads=2, state_key_dim=4, state_value_dim=8, conv_state_elements=10
        )
    )
    profile = kv_profile(model)
    assert profile.kv_bytes_per_token == 0
    assert profile.state_bytes_per_sequence == 888
    assert bytes_per_user(profile, 1) == bytes_per_user(profile, 1_000_000) == 888


def test_hybrid_linear_plus_full():
    # Qwen3-Next-like: 36 Gated DeltaNet layers + 12 full-attention layers
    state_layer = 32 * 128 * 128 + 24_576  # state heads x dk x dv + short-conv elements
    model = _model(
        AttentionGroup(
            "linear", 36, state_heads=32, state_key_dim=128, state_value_dim=128,
            conv_state_elements=24_576,
        ),
        AttentionGroup("full", 12, kv_heads=2, head_dim=256),
    )  # fmt: skip
    estimate = kv_estimate(model, Workload(context_tokens=4096, concurrency=3))
    assert estimate.state_bytes_per_sequence == 36 * state_layer * 4 == 79_036_416
    assert estimate.kv_bytes_per_token == 12 * 2 * 2 * 256 * 2 == 24_576
    assert estimate.kv_bytes_per_user == 4096 * 24_576 + 79_036_416
    assert estimate.kv_bytes_total == 3 * estimate.kv_bytes_per_user


@pytest.mark.parametrize(
    ("group", "missing"),
    [
        (AttentionGroup("full", 4, kv_heads=8), "model.attention[0].head_dim"),
        (AttentionGroup("sliding", 4, kv_heads=8, head_dim=64), "model.attention[0].window_tokens"),
        (AttentionGroup("mla", 4, kv_lora_rank=512), "model.attention[0].qk_rope_head_dim"),
        (
            AttentionGroup("linear", 4, state_heads=2, state_key_dim=4, state_value_dim=4),
            "model.attention[0].conv_state_elements",
        ),
    ],
)
def test_any_missing_dimension_makes_it_unknown(group, missing):
    estimate = kv_estimate(_model(group), Workload())
    assert not estimate.known
    assert missing in estimate.missing
    assert estimate.kv_bytes_per_token is None
    assert estimate.how_to_measure


def test_no_attention_layout_is_unknown_too():
    estimate = kv_estimate(ModelSpec("m", 10**9), Workload())
    assert not estimate.known
    assert estimate.missing == ("model.attention",)


def test_max_context_fits_exactly():
    profile = kv_profile(dense_model(layers=64, kv_heads=8, head_dim=128, kv_dtype="fp8"))
    assert max_context_tokens(profile, 2**30, 1) == 8192  # 1 GiB is 8k tokens
    assert max_context_tokens(profile, 2**30, 2) == 4096
    assert max_context_tokens(profile, 2**30 - 1, 1) == 8191
    assert max_context_tokens(profile, -1, 1) == 0


def test_max_context_with_only_sliding_layers_is_unbounded():
    model = _model(AttentionGroup("sliding", 4, kv_heads=1, head_dim=64, window_tokens=1024))
    assert max_context_tokens(kv_profile(model), 1e9, 1, cap=131_072) == 131_072
