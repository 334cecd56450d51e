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
