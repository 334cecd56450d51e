"""API schemas for the catalog. Inputs forbid unknown fields and range-check numbers."""

import datetime as dt
from typing import Literal

from ninja import Field, Schema
from pydantic import ConfigDict

MAX_PARAMS = 10**15


class In(Schema):
    model_config = ConfigDict(extra="forbid")


class AttentionGroupOut(Schema):
    kind: str
    layers: int
    kv_heads: int | None
    head_dim: int | None
    window_tokens: int | None
    kv_lora_rank: int | None
    qk_rope_head_dim: int | None
    state_heads: int | None
    state_key_dim: int | None
    state_value_dim: int | None
    conv_state_elements: int | None
    state_bytes_per_element: float
    note: str


class TensorGroupOut(Schema):
    name: str
    params: int
    weight_format: str = Field(..., alias="weight_format.name")


class ModelOut(Schema):
    slug: str
    name: str
    vendor: str
    release_date: dt.date | None
    licence: str
    architecture: str
    repo_id: str
    total_params: int | None
    active_params: int | None
    layers: int | None
    hidden_size: int | None
    vocab_size: int | None
    attention_heads: int | None
    max_context_tokens: int | None
    routed_experts: int | None
    active_experts: int | None
    shared_experts: int | None
    params_per_expert: int | None
    moe_layers: int | None
    weight_format: str = Field(..., alias="weight_format.name")
    kv_dtype: str
    checkpoint_bytes: int | None
    attention_groups: list[AttentionGroupOut]
    tensor_groups: list[TensorGroupOut]
    source_url: str
    source_note: str
    figures_as_of: dt.date | None

    @staticmethod
    def resolve_attention_groups(obj):
        return list(obj.attention_groups.all())

    @staticmethod
    def resolve_tensor_groups(obj):
        return list(obj.tensor_groups.all())


class AttentionGroupIn(In):
    kind: Literal["full", "sliding", "mla", "linear"]
    layers: int = Field(..., ge=1, le=10_000)
    kv_heads: int | None = Field(None, ge=1, le=100_000)
    head_dim: int | None = Field(None, ge=1, le=100_000)
    window_tokens: int | None = Field(None, ge=1, le=2**27)
    kv_lora_rank: int | None = Field(None, ge=1, le=100_000)
    qk_rope_head_dim: int | None = Field(None, ge=1, le=100_000)
    state_heads: int | None = Field(None, ge=1, le=100_000)
    state_key_dim: int | None = Field(None, ge=1, le=100_000)
    state_value_dim: int | None = Field(None, ge=1, le=100_000)
    conv_state_elements: int | None = Field(None, ge=0, le=10**9)
    state_bytes_per_element: float = Field(4.0, ge=0.5, le=8)
    note: str = Field("", max_length=200)


class TensorGroupIn(In):
    name: str = Field(..., min_length=1, max_length=60)
    params: int = Field(..., ge=1, le=MAX_PARAMS)
    weight_format: str


class ModelIn(In):
    slug: str = Field(..., pattern=r"^[-a-zA-Z0-9_.]+$", max_length=120)
    name: str = Field(..., min_length=1, max_length=120)
    vendor: str = Field("", max_length=80)
    release_date: dt.date | None = None
    licence: str = Field("", max_length=80)
    architecture: str = Field("", max_length=80)
    repo_id: str = Field("", max_length=200)
    total_params: int | None = Field(None, ge=1, le=MAX_PARAMS)
    active_params: int | None = Field(None, ge=1, le=MAX_PARAMS)
    layers: int | None = Field(None, ge=1, le=10_000)
    hidden_size: int | None = Field(None, ge=1, le=10**6)
    vocab_size: int | None = Field(None, ge=1, le=10**8)
    attention_heads: int | None = Field(None, ge=1, le=100_000)
    max_context_tokens: int | None = Field(None, ge=1, le=2**27)
    routed_experts: int | None = Field(None, ge=1, le=100_000)
    active_experts: int | None = Field(None, ge=1, le=100_000)
    shared_experts: int | None = Field(None, ge=0, le=100_000)
    params_per_expert: int | None = Field(None, ge=1, le=MAX_PARAMS)
    moe_layers: int | None = Field(None, ge=0, le=10_000)
    weight_format: str = "bf16"
    kv_dtype: Literal["bf16", "fp16", "fp8", "fp32"] = "bf16"
    checkpoint_bytes: int | None = Field(None, ge=1, le=10**16)
    attention_groups: list[AttentionGroupIn] = Field(default_factory=list, max_length=200)
    tensor_groups: list[TensorGroupIn] = Field(default_factory=list, max_length=50)
    source_url: str = Field("", max_length=500)
    source_note: str = Field("", max_length=300)
    figures_as_of: dt.date | None = None
    notes: str = Field("", max_length=5000)


class AcceleratorOut(Schema):
    slug: str
    name: str
    vendor: str
    kind: str
    memory_gb: float
    bandwidth_tb_s: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    fp4_tflops: float | None
    interconnect_gb_s: float | None
    gpus_per_node: int
    power_w: float | None
    source_url: str
    source_note: str
    figures_as_of: dt.date | None


class AcceleratorIn(In):
    slug: str = Field(..., pattern=r"^[-a-zA-Z0-9_]+$", max_length=80)
    name: str = Field(..., min_length=1, max_length=80)
    vendor: str = Field(..., min_length=1, max_length=40)
    kind: Literal["datacenter", "workstation", "consumer", "unified"] = "datacenter"
    memory_gb: float = Field(..., ge=1, le=100_000)
    bandwidth_tb_s: float | None = Field(None, ge=0.01, le=1000)
    bf16_tflops: float | None = Field(None, ge=0.1, le=10**6)
    fp8_tflops: float | None = Field(None, ge=0.1, le=10**6)
    fp4_tflops: float | None = Field(None, ge=0.1, le=10**6)
    interconnect_gb_s: float | None = Field(None, ge=0.1, le=10**5)
    gpus_per_node: int = Field(8, ge=1, le=1024)
    power_w: float | None = Field(None, ge=1, le=100_000)
    source_url: str = Field("", max_length=500)
    source_note: str = Field("", max_length=300)
    figures_as_of: dt.date | None = None
    notes: str = Field("", max_length=5000)


# --- sizing ----------------------------------------------------------------------------------

MAX_TOKENS = 10**16  # a month of output beyond any fleet


class ExpertIn(In):
    routed: int = Field(..., ge=1, le=100_000)
    active: int = Field(..., ge=1, le=100_000)
    shared: int = Field(0, ge=0, le=100_000)
    params_per_expert: int | None = Field(None, ge=1, le=MAX_PARAMS)
    moe_layers: int | None = Field(None, ge=0, le=10_000)


class SpecGroupIn(AttentionGroupIn):
    pass


class ModelSpecIn(In):
    """An inline model, for one that is not in the catalog (same fields as the engine's spec)."""

    name: str = Field(..., min_length=1, max_length=120)
    total_params: int = Field(..., ge=1, le=MAX_PARAMS)
    active_params: int | None = Field(None, ge=1, le=MAX_PARAMS)
    layers: int | None = Field(None, ge=1, le=10_000)
    attention: list[SpecGroupIn] = Field(default_factory=list, max_length=200)
    experts: ExpertIn | None = None
    tensor_groups: list[TensorGroupIn] = Field(default_factory=list, max_length=50)
    weight_format: str = "bf16"
    attention_heads: int | None = Field(None, ge=1, le=100_000)
    hidden_size: int | None = Field(None, ge=1, le=10**6)
    vocab_size: int | None = Field(None, ge=1, le=10**8)
    max_context_tokens: int | None = Field(None, ge=1, le=2**27)
    checkpoint_bytes: int | None = Field(None, ge=1, le=10**16)
    kv_dtype: Literal["bf16", "fp16", "fp8", "fp32"] = "bf16"


class AcceleratorSpecIn(In):
    name: str = Field(..., min_length=1, max_length=80)
    memory_gb: float = Field(..., ge=1, le=100_000)
    bandwidth_tb_s: float | None = Field(None, ge=0.01, le=1000)
    bf16_tflops: float | None = Field(None, ge=0.1, le=10**6)
    fp8_tflops: float | None = Field(None, ge=0.1, le=10**6)
    fp4_tflops: float | None = Field(None, ge=0.1, le=10**6)
    interconnect_gb_s: float | None = Field(None, ge=0.1, le=10**5)
    gpus_per_node: int = Field(8, ge=1, le=1024)
    power_w: float | None = Field(None, ge=1, le=100_000)


class WorkloadIn(In):
    context_tokens: int = Field(8192, ge=1, le=2**27)
    concurrency: int = Field(1, ge=1, le=1_000_000)
    kv_dtype: Literal["bf16", "fp16", "fp8", "fp32"] | None = None
    hours_per_day: float = Field(24.0, gt=0, le=24)
    days_per_month: int = Field(30, ge=1, le=31)
    utilisation: float = Field(1.0, gt=0, le=1)
    monthly_input_tokens: float = Field(0.0, ge=0, le=MAX_TOKENS)
    cached_input_share: float = Field(0.0, ge=0, le=1)
    monthly_output_tokens: float = Field(0.0, ge=0, le=MAX_TOKENS)
    prompt_tokens: int = Field(1024, ge=1, le=2**27)


class PricesIn(In):
    usd_per_gpu_hour: float | None = Field(None, ge=0, le=10_000)
    gpu_price_id: int | None = Field(None, ge=1, description="A dated GPU-hour price row")
    api_usd_per_m_input_hit: float | None = Field(None, ge=0, le=100_000)
    api_usd_per_m_input_miss: float | None = Field(None, ge=0, le=100_000)
    api_usd_per_m_output: float | None = Field(None, ge=0, le=100_000)
    api_price_id: int | None = Field(None, ge=1, description="A dated API price row")
    gateway_usd_per_month: float = Field(0.0, ge=0, le=10**7)


class AssumptionsIn(In):
    runtime_overhead_gb: float = Field(2.0, ge=0, le=1000)
    memory_utilisation_cap: float = Field(0.90, gt=0, le=1)
    activation_reserve_gb: float = Field(1.0, ge=0, le=1000)
    bandwidth_efficiency: float = Field(0.6, gt=0, le=1)
    compute_efficiency: float = Field(0.4, gt=0, le=1)
    download_gb_s: float = Field(1.0, gt=0, le=10_000)
    ram_bandwidth_gb_s: float = Field(60.0, gt=0, le=100_000)
    max_nodes: int = Field(64, ge=1, le=4096)


class SizingIn(In):
    model: str | ModelSpecIn = Field(..., description="A catalog slug, or an inline model spec")
    accelerator: str | AcceleratorSpecIn = Field(
        ..., description="A catalog slug, or an inline accelerator"
    )
    weight_format: str | None = Field(None, description="Override the model's weight format")
    workload: WorkloadIn = Field(default_factory=WorkloadIn)
    prices: PricesIn = Field(default_factory=PricesIn)
    assumptions: AssumptionsIn = Field(default_factory=AssumptionsIn)


class SizingOut(Schema):
    model: str
    accelerator: str
    weights_bytes: float
    kv_known: bool
    kv_bytes_per_token: float | None
    state_bytes_per_sequence: float | None
    kv_bytes_per_user: float | None
    min_gpus_for_weights: int
    recommended_gpus: int | None
    layout: dict
    decode_tokens_per_s: float | None
    tokens_per_s_per_usd_per_hour: float | None
    monthly_cost_usd: dict[str, float | None]
    break_even_output_tokens_per_month: float | None
    verdicts: dict[str, str]
    prices_used: dict
    detail: dict


class FloorRowOut(Schema):
    accelerator: str
    memory_gb: float
    weight_format: str
    weights_bytes: float
    min_gpus: int
    idealised_format: str | None
    idealised_weights_bytes: float | None
    min_gpus_idealised: int | None


class FloorOut(Schema):
    model: str
    weight_format: str
    weights_bytes: float
    rows: list[FloorRowOut]


class ImportIn(In):
    config: dict = Field(..., description="A Hugging Face config.json object")
    name: str = Field(..., min_length=1, max_length=120)
    slug: str | None = Field(None, pattern=r"^[-a-zA-Z0-9_.]+$", max_length=120)
    weight_format: str | None = None
    kv_dtype: Literal["bf16", "fp16", "fp8", "fp32"] | None = None


class ImportOut(Schema):
    name: str
    architecture: str
    total_params: int
    active_params: int | None
    weights_bytes: float
    kv_bytes_per_token: float | None
    state_bytes_per_sequence: float | None
    kv_dtype: str
    weight_format: str
    tensor_groups: list[dict]
    attention_groups: list[dict]
    experts: dict | None
    layers: int | None
    max_context_tokens: int | None
    saved_slug: str | None = None
