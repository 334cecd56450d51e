"""Weights: parameters x bytes per weight, summed over tensor groups (spec 3.1)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .formats import WEIGHT_FORMATS
from .specs import ModelSpec
from .validate import check_weight_format

# The article's idealised row for each format that stores scales next to 4-bit or 2-bit codes:
# 2.8T x 0.5 B = 1.4 TB, while MXFP4's 8-bit scale per 32 weights makes it 1.4875 TB.
IDEALISED_EQUIVALENT = {
    "mxfp4": "4-bit",
    "nvfp4": "4-bit",
    "int4-g128": "4-bit",
    "MXFP4_GGUF": "4-bit",
    "Q4_0": "4-bit",
    "Q4_K": "4-bit",
    "Q2_K": "2-bit",
}

# A tensor group whose name contains this holds the routed experts (gpt-oss: "experts" in MXFP4).
EXPERT_GROUP_MARK = "expert"


@dataclass(frozen=True)
class WeightsResult:
    weight_format: str  # the override, the model's format, or "mixed" (tensor groups differ)
    weights_bytes: float
    bytes_per_weight: float  # average over all parameters
    routed_expert_bytes: float | None  # None: a dense model, or the split is unknown
    dense_bytes: float | None  # everything read every token (attention, shared experts, ...)
    checkpoint_bytes: float
    checkpoint_exact: bool  # True when from model.safetensors.index.json, not computed
    idealised_format: str | None  # "4-bit" for MXFP4 etc.
    idealised_bytes: float | None
    scale_overhead_share: float | None  # 0.0625 for MXFP4 over the idealised 4-bit
    note: str


def _is_expert_group(name: str) -> bool:
    lowered = name.lower()
    return EXPERT_GROUP_MARK in lowered and "shared" not in lowered


def weights_bytes(model: ModelSpec, weight_format: str | None = None) -> float:
    return weights(model, weight_format).weights_bytes


def checkpoint_bytes(model: ModelSpec) -> float:
    """Exact when the index published it, otherwise the computed weights."""
    if model.checkpoint_bytes is not None:
        return float(model.checkpoint_bytes)
    return weights(model).weights_bytes


def routed_expert_params(model: ModelSpec) -> float | None:
    """All routed experts' parameters across all MoE layers, or None when not derivable."""
    e = model.experts
    if e is None:
        return None
    if e.params_per_expert is not None and e.moe_layers is not None:
        return float(e.routed * e.params_per_expert * e.moe_layers)
    for group in model.tensor_groups:
        if _is_expert_group(group.name):
            return float(group.params)
    # From the published totals: total - active = (routed - k) x per-expert params (all layers),
    # so routed x per-expert = (total - active) x routed / (routed - k). K3: ~2.745T of 2.8T.
    if model.active_params is not None and e.routed > e.active:
        return (model.total_params - model.active_params) * e.routed / (e.routed - e.active)
    return None


def expert_bytes_per_weight(model: ModelSpec, weight_format: str | None = None) -> float:
    if weight_format is not None:
        return WEIGHT_FORMATS[weight_format].bytes_per_weight
    for group in model.tensor_groups:
        if _is_expert_group(group.name):
            return WEIGHT_FORMATS[group.weight_format].bytes_per_weight
    return WEIGHT_FORMATS[model.weight_format].bytes_per_weight


@lru_cache(maxsize=2048)
def weights(model: ModelSpec, weight_format: str | None = None) -> WeightsResult:
    if weight_format is not None:
        check_weight_format(weight_format, "weight_format")
    groups = model.tensor_groups
    if groups:
        params = sum(g.params for g in groups)
        if weight_format is None:
            total = sum(g.params * WEIGHT_FORMATS[g.weight_format].bytes_per_weight for g in groups)
            formats = {g.weight_format for g in groups}
            fmt = formats.pop() if len(formats) == 1 else "mixed"
        else:
            total = params * WEIGHT_FORMATS[weight_format].bytes_per_weight
            fmt = weight_format
    else:
        params = model.total_params
        fmt = weight_format or model.weight_format
        total = params * WEIGHT_FORMATS[fmt].bytes_per_weight

    routed = routed_expert_params(model)
    routed_bytes = dense_bytes = None
    if routed is not None:
        routed_bytes = routed * expert_bytes_per_weight(model, weight_format)
        dense_bytes = max(0.0, total - routed_bytes)

    ideal_fmt = IDEALISED_EQUIVALENT.get(fmt)
    ideal_bytes = overhead = None
    note = ""
    if ideal_fmt is not None:
        ideal_bytes = params * WEIGHT_FORMATS[ideal_fmt].bytes_per_weight
        overhead = total / ideal_bytes - 1
        note = (
            f"{WEIGHT_FORMATS[fmt].description}: {overhead:.2%} more than the idealised "
            f"{ideal_fmt} figure, because the scales are stored too"
        )

    ckpt = model.checkpoint_bytes if weight_format is None else None
    return WeightsResult(
        weight_format=fmt,
        weights_bytes=total,
        bytes_per_weight=total / params,
        routed_expert_bytes=routed_bytes,
        dense_bytes=dense_bytes,
        checkpoint_bytes=total if ckpt is None else float(ckpt),
        checkpoint_exact=ckpt is not None,
        idealised_format=ideal_fmt,
        idealised_bytes=ideal_bytes,
        scale_overhead_share=overhead,
        note=note,
    )
