"""Hugging Face config.json import: counted parameters against the vendors' published totals,
the attention layout, experts and weight formats, and errors that name the config key.

The configs under sizing/catalog/configs are the published files (see SOURCES.md for where each
came from). Totals must land within 1% of the published figure. Active parameters use one
convention for every MoE (hf_config's docstring: idle experts and the input embedding table are
not active, the LM head is); vendors that also count the embedding table publish a little more,
so active figures get 10%, and 20% where the published figure is the model's rounded class name.
"""

import json
import math
from pathlib import Path

import pytest

from sizing.engine import SizingError
from sizing.engine.formats import WEIGHT_FORMATS
from sizing.engine.importers import (
    SUPPORTED_ARCHITECTURES,
    count_hf_params,
    import_hf_config,
    model_from_hf_config,
)
from sizing.engine.kv import kv_profile
from sizing.engine.specs import FULL, LINEAR, MLA, SLIDING
from sizing.engine.validate import validate_model

CONFIGS = Path(__file__).resolve().parents[2] / "sizing" / "catalog" / "configs"


def load(slug: str) -> dict:
    return json.loads((CONFIGS / f"{slug}.json").read_text())


def spec(slug: str, **kw):
    return model_from_hf_config(load(slug), name=slug, **kw)


B = 1e9
# slug: (published total, published active or None, active tolerance, where the figures are from)
PUBLISHED = {
    "llama-3.1-8b": (8.03 * B, None, None, "Meta model card"),
    "llama-3.1-70b": (70.6 * B, None, None, "Meta model card"),
    "llama-3.1-405b": (405.9 * B, None, None, "Meta model card"),
    "mistral-7b-v0.1": (7.24 * B, None, None, "Mistral 7B paper / HF"),
    "mixtral-8x7b": (46.7 * B, 12.9 * B, 0.10, "Mixtral paper (counts embeddings)"),
    "qwen2.5-7b": (7.61 * B, None, None, "Qwen2.5 model card"),
    "qwen3-14b": (14.8 * B, None, None, "Qwen3 model card"),
    "qwen3-32b": (32.8 * B, None, None, "Qwen3 model card"),
    "qwen3-30b-a3b": (30.5 * B, 3.3 * B, 0.10, "Qwen3 model card (counts embeddings)"),
    "qwen3-235b-a22b": (235 * B, 22 * B, 0.10, "Qwen3 model card"),
    "qwen3-next-80b-a3b": (80 * B, 3 * B, 0.20, "Qwen3-Next model card: '80B, 3B activated'"),
    "deepseek-v3": (671 * B, 37 * B, 0.10, "DeepSeek-V3 README, main model without MTP"),
    "kimi-k2": (1026.5 * B, 32 * B, 0.10, "HF safetensors count of Kimi-K2-Instruct; card: 32B"),
    "kimi-linear-48b-a3b": (48 * B, 3 * B, 0.10, "Kimi-Linear model card"),
    "gpt-oss-20b": (20.9 * B, 3.6 * B, 0.02, "gpt-oss model card (Table 1)"),
    "gpt-oss-120b": (116.8 * B, 5.1 * B, 0.02, "gpt-oss model card (Table 1)"),
    "glm-4.5": (355 * B, 32 * B, 0.10, "GLM-4.5 model card"),
    "glm-4.5-air": (106 * B, 12 * B, 0.10, "GLM-4.5 model card"),
    "minimax-m2": (230 * B, 10 * B, 0.10, "MiniMax-M2 model card"),
}
# Where 1% cannot hold, and why (kept out of PUBLISHED so the exception is visible).
TOTAL_TOLERANCE = {
    # "48B" is the rounded name: the 26 MoE layers alone hold 256 x 3 x 2304 x 1024 x 26 =
    # 47.1B; with embeddings, head, attention and the dense layer the checkpoint is 49.1B.
    # Without the embedding table and head it is 48.4B, which may be what the name rounds.
    "kimi-linear-48b-a3b": 0.03,
}


def test_every_shipped_config_has_a_published_figure():
    shipped = {p.stem for p in CONFIGS.glob("*.json")}
    assert shipped == set(PUBLISHED)


@pytest.mark.parametrize("slug", sorted(PUBLISHED))
def test_counted_total_and_active_match_the_published_figures(slug):
    total, active, active_tol, _source = PUBLISHED[slug]
    counted = count_hf_params(load(slug))
    tol = TOTAL_TOLERANCE.get(slug, 0.01)
    assert counted.total == pytest.approx(total, rel=tol), f"{counted.total / B:.3f}B"
    if active is None:
        assert counted.active == counted.total  # dense: everything is active
    else:
        assert counted.active == pytest.approx(active, rel=active_tol), f"{counted.active / B:.3f}B"
    assert counted.total == sum(params for _role, params in counted.by_role)


@pytest.mark.parametrize("slug", sorted(PUBLISHED))
def test_every_import_is_a_valid_engine_model(slug):
    m = spec(slug)
    validate_model(m)  # the other engine modules' own checks: layers covered, experts fit, ...
    kv_profile(m)
    assert m.layers == sum(g.layers for g in m.attention)
    assert m.hidden_size and m.vocab_size and m.attention_heads and m.max_context_tokens
    for g in m.tensor_groups:
        assert g.weight_format in WEIGHT_FORMATS


def test_exact_counts_for_the_dense_llamas():
    # Meta's published exact counts (model cards / safetensors metadata).
    assert count_hf_params(load("llama-3.1-8b")).total == 8_030_261_248
    assert count_hf_params(load("llama-3.1-70b")).total == 70_553_706_496
    assert count_hf_params(load("llama-3.1-405b")).total == 405_853_388_800


def test_qwen2_counts_its_qkv_bias():
    counted = dict(count_hf_params(load("qwen2.5-7b")).by_role)
    c = load("qwen2.5-7b")
    hd = c["hidden_size"] // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    weights = c["hidden_size"] * (2 * q + 2 * kv)
    assert counted["attention"] == c["num_hidden_layers"] * (weights + q + 2 * kv)
    # Qwen's exact figure is 7,615,616,512.
    assert count_hf_params(c).total == 7_615_616_512


def test_llama_attention_is_gqa_full():
    (g,) = spec("llama-3.1-70b").attention
    assert (g.kind, g.layers, g.kv_heads, g.head_dim) == (FULL, 80, 8, 128)


def test_mistral_uses_a_4096_sliding_window_on_every_layer():
    (g,) = spec("mistral-7b-v0.1").attention
    assert (g.kind, g.layers, g.window_tokens, g.kv_heads) == (SLIDING, 32, 4096, 8)


def test_qwen2_sliding_window_field_is_ignored_when_disabled():
    (g,) = spec("qwen2.5-7b").attention
    assert g.kind == FULL
    c = load("qwen2.5-7b") | {"use_sliding_window": True, "max_window_layers": 20}
    full, sliding = model_from_hf_config(c, name="q").attention
    assert (full.kind, full.layers) == (FULL, 20)
    assert (sliding.kind, sliding.layers, sliding.window_tokens) == (SLIDING, 8, 131072)


def test_gpt_oss_alternates_sliding_128_and_full_attention():
    sliding, full = spec("gpt-oss-120b").attention
    assert (sliding.kind, sliding.layers, sliding.window_tokens) == (SLIDING, 18, 128)
    assert (full.kind, full.layers, full.window_tokens) == (FULL, 18, None)
    assert sliding.kv_heads == full.kv_heads == 8 and sliding.head_dim == 64


def test_gpt_oss_experts_are_mxfp4_and_the_rest_bf16():
    m = spec("gpt-oss-120b")
    experts, rest = m.tensor_groups
    assert (experts.weight_format, rest.weight_format) == ("mxfp4", "bf16")
    assert "expert" in experts.name and "expert" not in rest.name
    assert experts.params + rest.params == m.total_params
    # Every expert matrix (not the expert biases) is MXFP4: 128 x 36 x 3 x 2880 x 2880.
    assert experts.params == 128 * 36 * 3 * 2880 * 2880
    assert m.weight_format == "mxfp4"
    assert m.experts.routed == 128 and m.experts.active == 4 and m.experts.shared == 0
    # ~61 GiB as published (the checkpoint is 65.2 GB with bf16 biases and embeddings).
    weights = sum(
        g.params * WEIGHT_FORMATS[g.weight_format].bytes_per_weight for g in m.tensor_groups
    )
    assert weights / 1e9 == pytest.approx(65.3, rel=0.01)


def test_gpt_oss_counts_attention_sinks_and_biases():
    by_role = dict(count_hf_params(load("gpt-oss-20b")).by_role)
    per_layer = (2880 * 4096 + 4096) + 2 * (2880 * 512 + 512) + (4096 * 2880 + 2880) + 64
    assert by_role["attention"] == 24 * per_layer
    # gpt-oss card: 0.96B attention for 120b (36 layers).
    assert dict(count_hf_params(load("gpt-oss-120b")).by_role)["attention"] == 36 * per_layer


def test_deepseek_v3_is_61_mla_layers():
    m = spec("deepseek-v3")
    (g,) = m.attention
    assert (g.kind, g.layers, g.kv_lora_rank, g.qk_rope_head_dim) == (MLA, 61, 512, 64)
    e = m.experts
    assert (e.routed, e.active, e.shared, e.moe_layers) == (256, 8, 1, 58)
    assert e.params_per_expert == 3 * 7168 * 2048


def test_deepseek_v3_active_matches_the_readme_exactly():
    # README_WEIGHTS.md: "Activation parameters: 36.6B (including 0.9B for the output Head)".
    assert count_hf_params(load("deepseek-v3")).active / B == pytest.approx(36.6, abs=0.05)


def test_deepseek_v3_with_its_mtp_module_is_685b():
    counted = count_hf_params(load("deepseek-v3"), include_mtp=True)
    assert counted.total == pytest.approx(685 * B, rel=0.01)
    assert counted.active == count_hf_params(load("deepseek-v3")).active  # MTP never active
    assert dict(counted.by_role)["mtp"] == pytest.approx(13.6 * B, rel=0.02)


def test_deepseek_v3_fp8_block_scales_are_counted():
    m = spec("deepseek-v3")
    linear, other, scales = m.tensor_groups
    assert (linear.weight_format, other.weight_format, scales.weight_format) == (
        "fp8",
        "bf16",
        "fp32",
    )
    assert linear.params + other.params == m.total_params
    # One fp32 scale per 128 x 128 block: about 1/16384 of the fp8 weights, ~0.16 GB.
    assert scales.params == pytest.approx(linear.params / 16384, rel=0.01)
    weights = sum(
        g.params * WEIGHT_FORMATS[g.weight_format].bytes_per_weight for g in m.tensor_groups
    )
    # The published checkpoint (with the MTP module) is 688.6 GB; without it ~673 GB.
    assert weights / 1e9 == pytest.approx(673.1, rel=0.005)
    # Embeddings, head, norms and routers are what stays bf16.
    assert other.params == pytest.approx(1.96 * B, rel=0.01)


def test_kimi_k2_shares_deepseek_code_with_384_experts_and_64_heads():
    m = spec("kimi-k2")
    (g,) = m.attention
    assert (g.kind, g.layers, g.kv_lora_rank) == (MLA, 61, 512)
    assert (m.experts.routed, m.experts.active, m.experts.moe_layers) == (384, 8, 60)
    assert m.attention_heads == 64
    # Moonshot's tech report rounds to 1.04T; the checkpoint holds 1,026.4B.
    assert m.total_params == pytest.approx(1.04e12, rel=0.015)


def test_qwen3_next_is_three_gated_deltanet_layers_per_full_layer():
    m = spec("qwen3-next-80b-a3b")
    linear, full = m.attention
    assert (linear.kind, linear.layers) == (LINEAR, 36)
    assert (full.kind, full.layers, full.kv_heads, full.head_dim) == (FULL, 12, 2, 256)
    # State per sequence: 32 value heads x 128 x 128, plus the short-conv tail.
    assert (linear.state_heads, linear.state_key_dim, linear.state_value_dim) == (32, 128, 128)
    assert linear.conv_state_elements == (2 * 16 * 128 + 32 * 128) * 3
    assert (m.experts.routed, m.experts.active, m.experts.shared) == (512, 10, 1)


def test_kimi_linear_is_20_kda_and_7_mla_layers():
    m = spec("kimi-linear-48b-a3b")
    kda, mla = m.attention
    assert (kda.kind, kda.layers, kda.state_heads, kda.state_key_dim) == (LINEAR, 20, 32, 128)
    assert kda.conv_state_elements == 3 * 32 * 128 * 3
    assert (mla.kind, mla.layers, mla.kv_lora_rank, mla.qk_rope_head_dim) == (MLA, 7, 512, 64)
    assert (m.experts.routed, m.experts.active, m.experts.shared) == (256, 8, 1)
    assert m.experts.moe_layers == 26
    assert m.max_context_tokens == 1048576  # from model_max_length


def test_glm_counts_dense_layers_and_shared_experts():
    m = spec("glm-4.5")
    assert m.experts.moe_layers == 89 and m.experts.shared == 1
    (g,) = m.attention
    assert (g.kind, g.layers, g.kv_heads, g.head_dim) == (FULL, 92, 8, 128)


def test_minimax_m2_fp8_keeps_the_router_and_head_high_precision():
    m = spec("minimax-m2")
    linear, other, scales = m.tensor_groups
    assert linear.weight_format == "fp8" and other.weight_format == "bf16"
    by_role = dict(count_hf_params(load("minimax-m2")).by_role)
    # Not converted: embeddings, head, norms, the router and its bias (modules_to_not_convert).
    assert (
        other.params
        == by_role["embed"]
        + by_role["head"]
        + by_role["router"]
        + sum(62 * n for n in (3072, 3072, 6144, 1024))
        + 3072
    )
    assert scales.params > 0


def test_mixtral_and_qwen3_moe_experts():
    m = spec("mixtral-8x7b")
    assert (m.experts.routed, m.experts.active, m.experts.moe_layers) == (8, 2, 32)
    q = spec("qwen3-235b-a22b")
    assert (q.experts.routed, q.experts.active, q.experts.moe_layers) == (128, 8, 94)
    assert q.experts.params_per_expert == 3 * 4096 * 1536


def test_qwen3_moe_dense_layers_from_mlp_only_layers_and_sparse_step():
    c = load("qwen3-30b-a3b") | {"mlp_only_layers": [0, 1], "decoder_sparse_step": 2}
    m = model_from_hf_config(c, name="q")
    assert m.experts.moe_layers == 23  # odd layers, minus layer 1
    base = count_hf_params(load("qwen3-30b-a3b")).total
    assert m.total_params < base


def test_plain_models_use_torch_dtype_and_no_groups():
    m = spec("llama-3.1-8b")
    assert m.weight_format == "bf16" and m.tensor_groups == () and m.kv_dtype == "bf16"
    c = load("llama-3.1-8b") | {"torch_dtype": "float16"}
    assert model_from_hf_config(c, name="x").weight_format == "fp16"


def test_weight_format_argument_overrides_the_checkpoint():
    m = spec("gpt-oss-120b", weight_format="fp8")
    assert m.weight_format == "fp8" and m.tensor_groups == ()
    assert m.total_params == spec("gpt-oss-120b").total_params


def test_tied_embeddings_count_once_and_stay_active():
    c = load("qwen3-30b-a3b")
    untied = count_hf_params(c)
    tied = count_hf_params(c | {"tie_word_embeddings": True})
    emb = c["vocab_size"] * c["hidden_size"]
    assert untied.total - tied.total == emb
    assert untied.active == tied.active  # the one shared matrix is the (active) head


def test_num_key_value_heads_defaults_to_the_attention_heads():
    c = load("llama-3.1-8b")
    del c["num_key_value_heads"]
    (g,) = model_from_hf_config(c, name="mha").attention
    assert g.kv_heads == 32


def test_compressed_tensors_int4_and_awq():
    c = load("qwen3-30b-a3b") | {
        "quantization_config": {
            "quant_method": "compressed-tensors",
            "config_groups": {
                "group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}
            },
            "ignore": ["lm_head", "re:.*self_attn.*"],
        }
    }
    m = model_from_hf_config(c, name="q")
    quantized, other = m.tensor_groups
    assert quantized.weight_format == "int4-g128"
    by_role = dict(count_hf_params(c).by_role)
    assert quantized.params == by_role["expert"]  # attention ignored, routers are not Linear
    awq = load("mixtral-8x7b") | {
        "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128,
                                "modules_to_not_convert": ["gate"]}
    }  # fmt: skip
    assert model_from_hf_config(awq, name="a").tensor_groups[0].weight_format == "int4-g128"


# --- errors: each names the config key at fault ---------------------------------------------


def error(config, **kw) -> SizingError:
    with pytest.raises(SizingError) as info:
        model_from_hf_config(config, name="bad", **kw)
    return info.value


def test_unsupported_architecture_names_the_field_and_lists_the_supported():
    e = error(load("llama-3.1-8b") | {"architectures": ["GPT2LMHeadModel"]})
    assert e.field == "architectures"
    assert "GPT2LMHeadModel not supported" in e.reason
    assert all(arch in e.reason for arch in SUPPORTED_ARCHITECTURES)


def test_missing_architectures():
    c = load("llama-3.1-8b")
    del c["architectures"]
    assert error(c).field == "architectures"


def test_missing_hidden_size_is_an_error():
    c = load("deepseek-v3")
    del c["hidden_size"]
    e = error(c)
    assert e.field == "hidden_size" and "missing" in e.reason


@pytest.mark.parametrize(
    "key, value",
    [
        ("num_hidden_layers", -4),
        ("num_attention_heads", 0),
        ("vocab_size", "128256"),
        ("intermediate_size", 1.5),
        ("num_key_value_heads", True),
    ],
)
def test_wrong_type_or_negative_values_name_the_key(key, value):
    e = error(load("llama-3.1-8b") | {key: value})
    assert e.field == key


def test_nested_keys_are_named_in_full():
    c = load("kimi-linear-48b-a3b")
    c["linear_attn_config"] = c["linear_attn_config"] | {"num_heads": -1}
    assert error(c).field == "linear_attn_config.num_heads"
    c = load("deepseek-v3")
    c["quantization_config"] = c["quantization_config"] | {"weight_block_size": [128]}
    assert error(c).field == "quantization_config.weight_block_size"


def test_inconsistent_values_are_errors():
    assert error(load("llama-3.1-8b") | {"num_key_value_heads": 5}).field == "num_key_value_heads"
    assert error(load("mixtral-8x7b") | {"num_experts_per_tok": 9}).field == "num_experts_per_tok"
    c = load("gpt-oss-20b")
    c["layer_types"] = c["layer_types"][:-1]
    assert error(c).field == "layer_types"


def test_unknown_dtype_quant_method_and_weight_format():
    assert error(load("llama-3.1-8b") | {"torch_dtype": "int3"}).field == "torch_dtype"
    q = {"quant_method": "hqq"}
    e = error(load("llama-3.1-8b") | {"quantization_config": q})
    assert e.field == "quantization_config.quant_method" and "weight_format" in e.reason
    assert error(load("llama-3.1-8b"), weight_format="fp7").field == "weight_format"


def test_not_a_dict():
    with pytest.raises(SizingError) as info:
        model_from_hf_config(["not", "a", "config"], name="x")
    assert info.value.field == "config"


def test_import_returns_the_notes_on_counting_choices():
    _, counted = import_hf_config(load("deepseek-v3"), name="DeepSeek-V3")
    assert any("MTP" in n for n in counted.notes)
    assert any("scales" in n for n in counted.notes)
    assert math.isclose(sum(p for _, p in counted.by_role), counted.total)
