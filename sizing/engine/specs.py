"""Frozen dataclasses the engine takes in. Plain Python: no Django, no ORM rows.

Units live in the names. Counts are ints; anything a vendor has not published is None
("unknown"), and the engine reports it as unknown rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Attention kinds (spec section 2).
FULL = "full"  # MHA / GQA / MQA: 2 x kv_heads x head_dim per token per layer
SLIDING = "sliding"  # as full, tokens capped at window
MLA = "mla"  # kv_lora_rank + qk_rope_head_dim per token per layer (one latent, no x2)
LINEAR = "linear"  # KDA / Gated DeltaNet / Mamba: fixed state per sequence
ATTENTION_KINDS = (FULL, SLIDING, MLA, LINEAR)


@dataclass(frozen=True)
class AttentionGroup:
    """A run of `layers` layers that share one attention kind and its dimensions."""

    kind: str
    layers: int
    kv_heads: int | None = None  # full / sliding
    head_dim: int | None = None  # full / sliding
    window_tokens: int | None = None  # sliding
    kv_lora_rank: int | None = None  # mla
    qk_rope_head_dim: int | None = None  # mla
    state_heads: int | None = None  # linear
    state_key_dim: int | None = None  # linear
    state_value_dim: int | None = None  # linear
    conv_state_elements: int | None = None  # linear: short-conv state per layer, elements
    state_bytes_per_element: float = 4.0  # linear state is usually kept in fp32
    note: str = ""


@dataclass(frozen=True)
class TensorGroup:
    """Parameters stored in one weight format (gpt-oss: experts MXFP4, the rest bf16)."""

    name: str
    params: int
    weight_format: str


@dataclass(frozen=True)
class ExpertSpec:
    routed: int
    active: int  # routed experts chosen per token
    shared: int = 0
    params_per_expert: int | None = None
    moe_layers: int | None = None


@dataclass(frozen=True)
class ModelSpec:
    name: str
    total_params: int
    active_params: int | None = None
    layers: int | None = None
    attention: tuple[AttentionGroup, ...] = ()
    experts: ExpertSpec | None = None
    # Weights by format. Empty means all total_params in `weight_format`.
    tensor_groups: tuple[TensorGroup, ...] = ()
    weight_format: str = "bf16"
    attention_heads: int | None = None  # query heads; TP size must divide them
    hidden_size: int | None = None
    vocab_size: int | None = None
    max_context_tokens: int | None = None
    checkpoint_bytes: int | None = None  # exact, from model.safetensors.index.json when published
    kv_dtype: str = "bf16"  # the model's own KV dtype
    slug: str = ""
    repo_id: str = ""  # Hugging Face repo id ("moonshotai/Kimi-K3") for the launch commands


@dataclass(frozen=True)
class AcceleratorSpec:
    name: str
    memory_gb: float  # decimal GB, as sold
    bandwidth_tb_s: float | None = None
    bf16_tflops: float | None = None  # dense
    fp8_tflops: float | None = None  # dense
    fp4_tflops: float | None = None  # dense
    interconnect_gb_s: float | None = None
    gpus_per_node: int = 8
    power_w: float | None = None
    slug: str = ""
    kind: str = "datacenter"  # datacenter / workstation / consumer / unified


@dataclass(frozen=True)
class Workload:
    context_tokens: int = 8192
    concurrency: int = 1
    kv_dtype: str | None = None  # None: the model's own
    hours_per_day: float = 24.0
    days_per_month: int = 30  # the article: always on = 24 h x 30 days = 720 h
    utilisation: float = 1.0  # share of peak decode throughput actually used
    monthly_input_tokens: float = 0.0
    cached_input_share: float = 0.0  # share of input billed at the cache-hit rate
    monthly_output_tokens: float = 0.0
    prompt_tokens: int = 1024  # for prefill time


@dataclass(frozen=True)
class Assumptions:
    """Named, shown to the user, overridable per scenario."""

    runtime_overhead_gb: float = 2.0  # per GPU (the article's "about 2 GB")
    memory_utilisation_cap: float = 0.90  # vLLM's default --gpu-memory-utilization
    activation_reserve_gb: float = 1.0  # per GPU, for activations and allocator slack
    bandwidth_efficiency: float = 0.6
    compute_efficiency: float = 0.4
    download_gb_s: float = 1.0  # the article: 1.5 TB at 1 GB/s = 25 minutes
    ram_bandwidth_gb_s: float = 60.0  # host RAM for llama.cpp offload (dual-channel DDR5)
    max_nodes: int = 64


@dataclass(frozen=True)
class Prices:
    usd_per_gpu_hour: float | None = None
    api_usd_per_m_input_hit: float | None = None
    api_usd_per_m_input_miss: float | None = None
    api_usd_per_m_output: float | None = None
    gateway_usd_per_month: float = 0.0  # the small VPS that keeps the key, logs, limits
    source: str = ""
    as_of: str = ""  # ISO date of the prices used


@dataclass(frozen=True)
class Scenario:
    model: ModelSpec
    accelerator: AcceleratorSpec
    workload: Workload = field(default_factory=Workload)
    prices: Prices = field(default_factory=Prices)
    assumptions: Assumptions = field(default_factory=Assumptions)
