"""Read a ``model.safetensors.index.json``: exact checkpoint bytes and what its tensor names say.

``metadata.total_size`` is the sum of every tensor's bytes across the shards (the shard headers,
a few MB, are not in it), so it is the exact download and the exact weight bytes of the
checkpoint as published, scales and all. The index names tensors but gives no shapes or dtypes;
the name suffixes still tell which quantization the shards carry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..errors import SizingError
from ..specs import ModelSpec
from ._fields import Fields

# Tensor-name suffixes and what they mean (transformers / vLLM loaders).
_HINTS = (
    ("weight_scale_inv", "fp8 block-quantized weights (weight_scale_inv)"),
    ("_blocks", "MXFP4 packed weights (*_blocks / *_scales)"),
    ("weight_packed", "compressed-tensors packed int weights (weight_packed)"),
    ("qweight", "AWQ/GPTQ packed int4 weights (qweight)"),
    ("weight_scale_2", "NVFP4 weights (weight_scale_2)"),
)
_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


@dataclass(frozen=True)
class SafetensorsIndex:
    total_size_bytes: int
    tensor_count: int
    shard_count: int
    layer_count: int | None  # highest "layers.N." index + 1; counts MTP layers stored as layers
    hints: tuple[str, ...]


def read_safetensors_index(index: dict) -> SafetensorsIndex:
    """Validate an index and read its size, tensor count and quantization hints."""
    root = Fields(index, what="index")
    meta = root.sub("metadata")
    total = meta.data.get("total_size")
    if total is None:
        raise SizingError("metadata.total_size", "is required and missing from the index")
    if isinstance(total, str) and total.isdigit():
        total = int(total)  # some converters write the size as a string; HF writes an integer
    total = Fields.check_int("metadata.total_size", total, 1, 10**16)

    weight_map = root.data.get("weight_map", {})
    if not isinstance(weight_map, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()
    ):
        raise SizingError("weight_map", "must map tensor names to shard file names")
    layers = [int(m.group(1)) for name in weight_map if (m := _LAYER.search(name))]
    hints = tuple(
        text for suffix, text in _HINTS if any(name.endswith(suffix) for name in weight_map)
    )
    return SafetensorsIndex(
        total_size_bytes=total,
        tensor_count=len(weight_map),
        shard_count=len(set(weight_map.values())),
        layer_count=max(layers) + 1 if layers else None,
        hints=hints,
    )


def model_from_safetensors_index(index: dict, model: ModelSpec) -> ModelSpec:
    """``model`` with ``checkpoint_bytes`` set to the index's exact ``metadata.total_size``."""
    return replace(model, checkpoint_bytes=read_safetensors_index(index).total_size_bytes)
