"""The three tiers (spec 3.6-3.8): rent the cluster, a smaller model on one card, a hosted API."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .kv import KVProfile, bytes_per_user, kv_profile, max_context_tokens
from .specs import FULL, AcceleratorSpec, AttentionGroup, ExpertSpec, ModelSpec, Prices
from .speed import active_params
from .validate import MAX_CONTEXT_TOKENS
from .weights import WeightsResult, weights

# The article: always on = 24 h x 30 days = 720 GPU-hours a month per GPU.
HOURS_PER_DAY_ALWAYS_ON = 24.0
DAYS_PER_MONTH = 30
# The article's tier-2 rule: weights + KV + "about 2 GB" of runtime overhead must fit in VRAM.
TIER2_OVERHEAD_GB = 2.0
# Longest run of steps scanned for break-even crossings (one step per extra replica).
MAX_REPLICA_STEPS = 10_000


# ---------------------------------------------------------------- tier 1: rent the cluster


@dataclass(frozen=True)
class Tier1Cost:
    gpus: int
    hours_per_day: float
    days_per_month: int
    gpu_hours_per_month: float
    usd_per_gpu_hour: float | None
    usd_per_month: float | None
    checkpoint_bytes: float
    download_gb_s: float
    cold_start_s: float  # downloading the checkpoint, billed before the first token
    cold_start_usd: float | None  # all the cluster's GPUs for that time
    utilisation: float
    output_tokens_per_month: float | None  # one replica's capacity at that utilisation
    usd_per_m_output: float | None
    tokens_per_s_per_usd_per_hour: float | None  # (tokens/s) / (USD/h) of cluster rent


def gpu_hours_per_month(
    gpus: int, hours_per_day: float = HOURS_PER_DAY_ALWAYS_ON, days_per_month: int = DAYS_PER_MONTH
) -> float:
    return gpus * hours_per_day * days_per_month


def cold_start_seconds(checkpoint_bytes: float, download_gb_s: float) -> float:
    return checkpoint_bytes / (download_gb_s * 1e9)


def tier1_cost(
    gpus: int,
    usd_per_gpu_hour: float | None,
    hours_per_day: float = HOURS_PER_DAY_ALWAYS_ON,
    days_per_month: int = DAYS_PER_MONTH,
    checkpoint_bytes: float = 0.0,
    download_gb_s: float = 1.0,
    tokens_per_s: float | None = None,
    utilisation: float = 1.0,
) -> Tier1Cost:
    hours = gpu_hours_per_month(gpus, hours_per_day, days_per_month)
    cold = cold_start_seconds(checkpoint_bytes, download_gb_s)
    monthly = cold_usd = per_m = per_dollar = capacity = None
    if tokens_per_s is not None:
        capacity = tokens_per_s * utilisation * hours_per_day * days_per_month * 3600
    if usd_per_gpu_hour is not None:
        monthly = hours * usd_per_gpu_hour
        cold_usd = gpus * cold / 3600 * usd_per_gpu_hour
        if capacity:
            per_m = monthly / (capacity / 1e6)
        if tokens_per_s is not None:
            per_dollar = tokens_per_s * utilisation / (gpus * usd_per_gpu_hour)
    return Tier1Cost(
        gpus, hours_per_day, days_per_month, hours, usd_per_gpu_hour, monthly,
        checkpoint_bytes, download_gb_s, cold, cold_usd, utilisation, capacity, per_m, per_dollar,
    )  # fmt: skip


# ---------------------------------------------------------------- tier 2: one accelerator


@dataclass(frozen=True)
class OffloadEstimate:
    """llama.cpp with the layers that do not fit in system RAM (-ngl below the layer count)."""

    gpu_bytes: float  # weights kept on the card
    ram_bytes: float  # weights in system RAM
    bytes_read_per_token: float  # all weights for dense; active params x bytes for MoE
    seconds_per_token: float | None  # None: the card's bandwidth is unknown
    tokens_per_s: float | None


@dataclass(frozen=True)
class Tier2Fit:
    model_name: str
    accelerator_name: str
    weight_format: str
    fits: bool
    memory_gb: float
    weights_gb: float
    kv_gb: float | None  # None: unknown, left out of `needed_gb`
    overhead_gb: float
    needed_gb: float
    kv_known: bool
    context_tokens: int
    concurrency: int
    max_context_tokens: int | None  # what each user could have in the memory left
    offload: OffloadEstimate | None  # when it does not fit


def tier2_fit(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    context_tokens: int = 8192,
    concurrency: int = 1,
    kv_dtype: str | None = None,
    weight_format: str | None = None,
    overhead_gb: float = TIER2_OVERHEAD_GB,
    ram_bandwidth_gb_s: float = 60.0,
) -> Tier2Fit:
    return _tier2_fit(
        model, accelerator, context_tokens, concurrency, weights(model, weight_format),
        kv_profile(model, kv_dtype), overhead_gb, ram_bandwidth_gb_s,
    )  # fmt: skip


def _tier2_fit(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    context_tokens: int,
    concurrency: int,
    w: WeightsResult,
    profile: KVProfile,
    overhead_gb: float,
    ram_bandwidth_gb_s: float,
) -> Tier2Fit:
    per_user = bytes_per_user(profile, context_tokens)
    kv_bytes = None if per_user is None else per_user * concurrency
    memory_bytes = accelerator.memory_gb * 1e9
    overhead_bytes = overhead_gb * 1e9
    needed = w.weights_bytes + (kv_bytes or 0.0) + overhead_bytes
    fits = needed <= memory_bytes
    left = memory_bytes - w.weights_bytes - overhead_bytes
    cap = model.max_context_tokens or MAX_CONTEXT_TOKENS
    longest = max_context_tokens(profile, left, concurrency, cap) if left >= 0 else 0
    if not profile.known:
        longest = None

    offload = None
    if not fits:
        on_gpu = max(0.0, min(w.weights_bytes, memory_bytes - overhead_bytes - (kv_bytes or 0.0)))
        in_ram = w.weights_bytes - on_gpu
        read = w.weights_bytes
        active = active_params(model) if model.experts is not None else None
        if active is not None:
            read = active * w.bytes_per_weight  # a MoE reads only its active experts
        # the bytes read split like the weights: a token touches both parts in proportion
        gpu_share = on_gpu / w.weights_bytes
        s_per_token = None
        if accelerator.bandwidth_tb_s is not None:
            s_per_token = read * gpu_share / (accelerator.bandwidth_tb_s * 1e12) + read * (
                1 - gpu_share
            ) / (ram_bandwidth_gb_s * 1e9)
        offload = OffloadEstimate(
            on_gpu, in_ram, read, s_per_token, None if s_per_token is None else 1 / s_per_token
        )
    return Tier2Fit(
        model.name, accelerator.name, w.weight_format, fits, accelerator.memory_gb,
        w.weights_bytes / 1e9, None if kv_bytes is None else kv_bytes / 1e9, overhead_gb,
        needed / 1e9, profile.known, context_tokens, concurrency, longest, offload,
    )  # fmt: skip


def tier2_fits(
    models: Sequence[ModelSpec],
    accelerator: AcceleratorSpec,
    context_tokens: int = 8192,
    concurrency: int = 1,
    kv_dtype: str | None = None,
    overhead_gb: float = TIER2_OVERHEAD_GB,
    ram_bandwidth_gb_s: float = 60.0,
) -> tuple[Tier2Fit, ...]:
    return tuple(
        tier2_fit(
            m, accelerator, context_tokens, concurrency, kv_dtype, None, overhead_gb,
            ram_bandwidth_gb_s,
        )
        for m in models
    )  # fmt: skip


def _dense(label: str, params: float, layers: int, kv_heads: int, heads: int) -> ModelSpec:
    return ModelSpec(
        name=label,
        total_params=int(params),
        layers=layers,
        attention=(AttentionGroup(FULL, layers, kv_heads=kv_heads, head_dim=128),),
        weight_format="4-bit",
        attention_heads=heads,
    )


# The article's one-card list at its nominal sizes and 0.5 B a weight, each with the attention
# of the family that made the size class (config.json of Qwen2.5-7B/14B/32B-Instruct,
# Llama-3.1-70B-Instruct and Qwen3-30B-A3B), KV in bf16 as llama.cpp keeps it by default.
ONE_CARD_REFERENCE_MODELS: tuple[ModelSpec, ...] = (
    _dense("7B", 7e9, 28, 4, 28),
    _dense("14B", 14e9, 48, 8, 40),
    _dense("32B", 32e9, 64, 8, 40),
    _dense("70B", 70e9, 80, 8, 64),
)
ONE_CARD_MOE_8BIT = ModelSpec(
    name="30B-class MoE",
    total_params=30_000_000_000,
    active_params=3_000_000_000,
    layers=48,
    attention=(AttentionGroup(FULL, 48, kv_heads=4, head_dim=128),),
    experts=ExpertSpec(routed=128, active=8),
    weight_format="fp8",
    attention_heads=32,
)
# "A long context" for the list: at 64k tokens the article's pairings come out exactly
# (at 32k a 14B would also fit 16 GB; at 128k a 14B would not fit 24 GB).
ONE_CARD_CONTEXT_TOKENS = 65_536


@dataclass(frozen=True)
class OneCardPick:
    memory_gb: float
    context_tokens: int
    largest_dense_4bit: str | None  # "70B"; None when not even the 7B fits
    moe_8bit_fits: bool  # the article's "or a 30B-class MoE at 8-bit"
    fits: tuple[str, ...]  # every reference that fits, e.g. "32B at 4-bit"


@lru_cache(maxsize=512)
def one_card_pick(memory_gb: float, context_tokens: int = ONE_CARD_CONTEXT_TOKENS) -> OneCardPick:
    card = AcceleratorSpec(name=f"{memory_gb:g} GB card", memory_gb=memory_gb)
    largest = None
    labels = []
    for ref in ONE_CARD_REFERENCE_MODELS:
        if tier2_fit(ref, card, context_tokens).fits:
            largest = ref.name
            labels.append(f"{ref.name} at 4-bit")
    moe = tier2_fit(ONE_CARD_MOE_8BIT, card, context_tokens).fits
    if moe:
        labels.append(f"{ONE_CARD_MOE_8BIT.name} at 8-bit")
    return OneCardPick(memory_gb, context_tokens, largest, moe, tuple(labels))


# ---------------------------------------------------------------- tier 3: hosted API


@dataclass(frozen=True)
class Tier3Cost:
    input_hit_tokens: float
    input_miss_tokens: float
    output_tokens: float
    usd_input_hit: float
    usd_input_miss: float
    usd_output: float
    usd_gateway: float  # the small VPS that keeps the key, logs, retries, limits
    usd_per_month: float
    usd_per_m_output_effective: float  # output price + the input billed per output token


def api_monthly_cost(
    input_tokens: float, cached_input_share: float, output_tokens: float, prices: Prices
) -> Tier3Cost | None:
    """None when a price the volume needs is missing."""
    hit = input_tokens * cached_input_share
    miss = input_tokens - hit
    hit_price, miss_price = prices.api_usd_per_m_input_hit, prices.api_usd_per_m_input_miss
    out_price = prices.api_usd_per_m_output
    if out_price is None or (hit and hit_price is None) or (miss and miss_price is None):
        return None
    usd_hit = hit * (hit_price or 0.0) / 1e6
    usd_miss = miss * (miss_price or 0.0) / 1e6
    usd_out = output_tokens * out_price / 1e6
    effective = out_price
    if output_tokens > 0:
        effective += (usd_hit + usd_miss) / output_tokens * 1e6
    gateway = prices.gateway_usd_per_month
    return Tier3Cost(
        hit, miss, output_tokens, usd_hit, usd_miss, usd_out, gateway,
        usd_hit + usd_miss + usd_out + gateway, effective,
    )  # fmt: skip


# ---------------------------------------------------------------- break-even


@dataclass(frozen=True)
class BreakEven:
    # The monthly output volume from which renting is no dearer than the API; None: never.
    output_tokens_per_month: float | None
    output_tokens_per_day: float | None
    selfhost_usd_per_replica_month: float
    api_usd_per_m_output: float  # effective: input billed per output token included
    gateway_usd_per_month: float
    replica_output_tokens_per_month: float | None  # None: capacity unknown, one replica assumed
    reason: str  # why there is none


@dataclass(frozen=True)
class BreakEvenSeries:
    points: tuple[tuple[float, float, float], ...]  # (output tokens/month, api USD, selfhost USD)
    crossings: tuple[float, ...]  # volumes where the cheaper option changes


def break_even(
    selfhost_usd_per_month: float,
    api_usd_per_m_output: float,
    gateway_usd_per_month: float = 0.0,
    replica_output_tokens_per_month: float | None = None,
    days_per_month: int = DAYS_PER_MONTH,
) -> BreakEven:
    m, g, c = selfhost_usd_per_month, gateway_usd_per_month, replica_output_tokens_per_month
    per_token = api_usd_per_m_output / 1e6

    def result(volume: float | None, reason: str = "") -> BreakEven:
        per_day = None if volume is None else volume / days_per_month
        return BreakEven(volume, per_day, m, api_usd_per_m_output, g, c, reason)

    if g >= m:
        return result(0.0)  # the gateway alone costs as much as a replica
    if per_token <= 0:
        return result(None, "the API charges nothing per output token")
    volume = (m - g) / per_token
    # Self-hosting's average cost per token is lowest at full replicas, so if one full replica
    # is dearer than the API for the same tokens, no number of replicas ever catches up.
    if c is not None and volume > c:
        return result(
            None,
            f"one replica at full load serves {c:,.0f} output tokens a month for "
            f"${m:,.0f}; the API charges ${g + c * per_token:,.0f} for them",
        )
    return result(volume)


def selfhost_usd(volume: float, usd_per_replica: float, replica_capacity: float | None) -> float:
    if replica_capacity is None or volume <= replica_capacity:
        return usd_per_replica
    return math.ceil(volume / replica_capacity) * usd_per_replica


def crossings(
    selfhost_usd_per_month: float,
    api_usd_per_m_output: float,
    gateway_usd_per_month: float,
    replica_output_tokens_per_month: float | None,
    max_output_tokens: float,
) -> tuple[float, ...]:
    """Volumes up to `max_output_tokens` where the cheaper option changes.

    The API is a line (gateway + price x volume); self-hosting steps up by one replica each time
    the volume passes a replica's capacity. So inside a step the API can overtake the replicas,
    and at a step the replicas can jump back above the API.
    """
    m, g, c = selfhost_usd_per_month, gateway_usd_per_month, replica_output_tokens_per_month
    a = api_usd_per_m_output / 1e6
    found: list[float] = []
    if c is None or c <= 0:
        if a > 0 and g < m and (m - g) / a <= max_output_tokens:
            found.append((m - g) / a)
        return tuple(found)
    steps = min(MAX_REPLICA_STEPS, math.ceil(max_output_tokens / c))
    for k in range(1, steps + 1):
        lo, hi = (k - 1) * c, min(k * c, max_output_tokens)
        if a > 0:
            v = (k * m - g) / a
            if lo < v <= hi:
                found.append(v)  # the API line passes k replicas inside this step
        if k * c <= max_output_tokens and k * m <= g + a * k * c < (k + 1) * m:
            found.append(k * c)  # one more replica jumps above the API
    return tuple(found)


def break_even_series(
    selfhost_usd_per_month: float,
    api_usd_per_m_output: float,
    gateway_usd_per_month: float = 0.0,
    replica_output_tokens_per_month: float | None = None,
    points: int = 500,
    max_output_tokens: float | None = None,
) -> BreakEvenSeries:
    m, g, c = selfhost_usd_per_month, gateway_usd_per_month, replica_output_tokens_per_month
    a = api_usd_per_m_output / 1e6
    if max_output_tokens is None:
        # Far enough to show the crossing and a couple of replica steps after it.
        first = (m - g) / a if a > 0 and g < m else 0.0
        max_output_tokens = max(2 * first, 3 * (c or 0.0), 1e6)
    n = max(2, points)
    step = max_output_tokens / (n - 1)
    volumes = [i * step for i in range(n)]
    if c is None or c <= 0:
        out = tuple((v, g + a * v, m) for v in volumes)
    else:
        out = tuple(
            (v, g + a * v, m if v <= c else math.ceil(v / c) * m) for v in volumes
        )  # fmt: skip
    return BreakEvenSeries(out, crossings(m, api_usd_per_m_output, g, c, max_output_tokens))
