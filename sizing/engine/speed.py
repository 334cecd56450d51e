"""Decode and prefill speed (spec 3.5). Decode is memory-bound until the batch is large."""

from __future__ import annotations

from dataclasses import dataclass

from .kv import KVProfile, bytes_per_user, kv_profile
from .specs import AcceleratorSpec, Assumptions, ModelSpec, Prices, Workload
from .weights import WeightsResult, weights

# Which dense peak a weight format computes at. MXFP4/NVFP4 run on FP4 tensor cores (Blackwell);
# fp8 on FP8 ones; weight-only integer and GGUF formats are dequantised and multiply in bf16.
# When the card lacks a peak we fall back along the chain (an H100 runs MXFP4 at fp8 speed).
PEAK_CHAIN = {
    "fp4": ("fp4_tflops", "fp8_tflops", "bf16_tflops"),
    "fp8": ("fp8_tflops", "bf16_tflops"),
    "bf16": ("bf16_tflops",),
}
FP4_FORMATS = frozenset({"mxfp4", "nvfp4", "4-bit", "2-bit"})
FP8_FORMATS = frozenset({"fp8"})


@dataclass(frozen=True)
class SpeedEstimate:
    known: bool
    missing: tuple[str, ...]  # e.g. "accelerator.bandwidth_tb_s", "model.active_params"
    gpus: int
    batch: int
    context_tokens: int
    active_params: float | None
    weights_bytes_per_step: float | None  # dense weights + the experts touched at this batch
    kv_bytes_per_step: float | None  # None: KV unknown, left out of the step
    kv_included: bool
    bytes_per_step: float | None
    expected_experts_per_layer: float | None  # distinct routed experts touched per MoE layer
    peak_kind: str  # "fp4" / "fp8" / "bf16": the precision whose peak the card was read at
    peak_tflops: float | None  # per GPU, dense
    memory_time_s: float | None
    compute_time_s: float | None
    step_time_s: float | None
    bound: str  # "memory" or "compute"
    tokens_per_s: float | None  # all users together
    tokens_per_s_per_user: float | None
    prefill_s: float | None  # one prompt of workload.prompt_tokens, compute-bound
    cluster_usd_per_hour: float | None
    # The article's deciding number: tokens per second per dollar-per-hour of cluster rent,
    # i.e. (tokens/s) / (USD/h). x 3600 it is tokens per dollar.
    tokens_per_s_per_usd_per_hour: float | None
    tokens_per_usd: float | None


def expected_distinct_experts(routed: int, active: int, batch: int) -> float:
    """Distinct experts a MoE layer touches for `batch` tokens routed independently."""
    return routed * (1 - (1 - active / routed) ** batch)


def active_params(model: ModelSpec) -> float | None:
    if model.active_params is not None:
        return float(model.active_params)
    e = model.experts
    if e is None:
        return float(model.total_params)
    if e.params_per_expert is not None and e.moe_layers is not None:
        idle = (e.routed - e.active) * e.params_per_expert * e.moe_layers
        return float(model.total_params - idle)
    return None


def peak_for(accelerator: AcceleratorSpec, weight_format: str) -> tuple[str, float | None]:
    if weight_format in FP4_FORMATS:
        kind = "fp4"
    elif weight_format in FP8_FORMATS:
        kind = "fp8"
    else:
        kind = "bf16"
    for name in PEAK_CHAIN[kind]:
        value = getattr(accelerator, name)
        if value is not None:
            return name.removesuffix("_tflops"), float(value)
    return kind, None


def decode_speed(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    gpus: int,
    workload: Workload | None = None,
    assumptions: Assumptions | None = None,
    prices: Prices | None = None,
    weight_format: str | None = None,
) -> SpeedEstimate:
    workload = workload or Workload()
    return _speed(
        model,
        accelerator,
        gpus,
        workload,
        assumptions or Assumptions(),
        prices or Prices(),
        weights(model, weight_format),
        kv_profile(model, workload.kv_dtype),
    )


def _speed(
    model: ModelSpec,
    acc: AcceleratorSpec,
    gpus: int,
    workload: Workload,
    assumptions: Assumptions,
    prices: Prices,
    w: WeightsResult,
    profile: KVProfile,
) -> SpeedEstimate:
    batch, context = workload.concurrency, workload.context_tokens
    missing: list[str] = []
    active = active_params(model)
    if active is None:
        missing.append("model.active_params")

    e = model.experts
    experts_touched = None
    weight_bytes: float | None
    if e is None:
        weight_bytes = w.weights_bytes
    elif w.routed_expert_bytes is None or w.dense_bytes is None:
        weight_bytes = None
        missing.append("model.experts.params_per_expert")
    else:
        experts_touched = expected_distinct_experts(e.routed, e.active, batch)
        weight_bytes = w.dense_bytes + w.routed_expert_bytes * experts_touched / e.routed

    per_user = bytes_per_user(profile, context)
    kv_bytes = None if per_user is None else per_user * batch  # every user at full context
    peak_kind, peak = peak_for(acc, _compute_format(model, w))
    if acc.bandwidth_tb_s is None:
        missing.append("accelerator.bandwidth_tb_s")

    hourly = None if prices.usd_per_gpu_hour is None else gpus * prices.usd_per_gpu_hour
    prefill = None
    if active is not None and peak is not None:
        compute_rate = gpus * peak * 1e12 * assumptions.compute_efficiency
        prefill = 2 * active * workload.prompt_tokens / compute_rate

    if missing or weight_bytes is None or active is None or acc.bandwidth_tb_s is None:
        return SpeedEstimate(
            False, tuple(missing), gpus, batch, context, active, weight_bytes, kv_bytes,
            kv_bytes is not None, None,
            experts_touched, peak_kind, peak, None, None, None, "memory", None, None, prefill,
            hourly, None, None,
        )  # fmt: skip

    step_bytes = weight_bytes + (kv_bytes or 0.0)
    # All GPUs read their share at once: true for TP and EP; pipeline stages need enough
    # micro-batches in flight to stay busy, which a batch of B users provides.
    memory_s = step_bytes / (gpus * acc.bandwidth_tb_s * 1e12 * assumptions.bandwidth_efficiency)
    compute_s = None
    if peak is not None:
        compute_s = 2 * active * batch / (gpus * peak * 1e12 * assumptions.compute_efficiency)
    step = memory_s if compute_s is None else max(memory_s, compute_s)
    tokens_per_s = batch / step
    per_dollar = None if hourly is None else tokens_per_s / hourly
    return SpeedEstimate(
        True, (), gpus, batch, context, active, weight_bytes, kv_bytes, kv_bytes is not None,
        step_bytes,
        experts_touched, peak_kind, peak, memory_s, compute_s, step,
        "compute" if compute_s is not None and compute_s > memory_s else "memory",
        tokens_per_s, 1 / step, prefill, hourly, per_dollar,
        None if per_dollar is None else per_dollar * 3600,
    )  # fmt: skip


def _compute_format(model: ModelSpec, w: WeightsResult) -> str:
    # With mixed formats, most of a MoE's FLOPs are in the experts: their format picks the peak.
    if w.weight_format != "mixed":
        return w.weight_format
    for group in model.tensor_groups:
        if "expert" in group.name.lower():
            return group.weight_format
    return model.weight_format
