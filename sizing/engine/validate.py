"""Input checks. Every failure is a SizingError naming the field, e.g. "workload.context_tokens"."""

from __future__ import annotations

import math
from functools import lru_cache

from .errors import SizingError
from .formats import KV_DTYPE_BYTES, WEIGHT_FORMATS
from .specs import (
    ATTENTION_KINDS,
    AcceleratorSpec,
    Assumptions,
    AttentionGroup,
    ExpertSpec,
    ModelSpec,
    Prices,
    Scenario,
    TensorGroup,
    Workload,
)

# Limits that catch typos (an extra "e3"), not real-world edges. K3 is 2.8e12 parameters.
MAX_PARAMS = 1e15
# 2^27 = 134 M tokens; the longest announced context windows are 10 M.
MAX_CONTEXT_TOKENS = 2**27
MAX_LAYERS = 100_000
MAX_DIM = 10_000_000  # heads, head dims, latent ranks, windows' elements
MAX_CONCURRENCY = 10_000_000
MAX_MEMORY_GB = 1_000_000.0  # 1 PB on one accelerator is a typo
MAX_BANDWIDTH_TB_S = 10_000.0
MAX_TFLOPS = 10_000_000.0
MAX_GPUS_PER_NODE = 100_000
MAX_NODES = 100_000
MAX_MONTHLY_TOKENS = 1e18
MAX_USD = 1e12


def _real(value: object, field: str) -> float:
    # bool is an int in Python; a checkbox value in a count field is a bug upstream
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SizingError(field, f"must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise SizingError(field, "must be a finite number")
    return float(value)


def check_int(value: object, field: str, minimum: int = 1, maximum: float = math.inf) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SizingError(field, f"must be a whole number, got {value!r}")
    if value < minimum:
        raise SizingError(field, f"must be at least {minimum}, got {value}")
    if value > maximum:
        raise SizingError(field, f"must be at most {maximum:g}, got {value}")


def check_positive(value: object, field: str, maximum: float = math.inf) -> None:
    x = _real(value, field)
    if x <= 0:
        raise SizingError(field, f"must be greater than zero, got {value}")
    if x > maximum:
        raise SizingError(field, f"must be at most {maximum:g}, got {value}")


def check_non_negative(value: object, field: str, maximum: float = math.inf) -> None:
    x = _real(value, field)
    if x < 0:
        raise SizingError(field, f"must not be negative, got {value}")
    if x > maximum:
        raise SizingError(field, f"must be at most {maximum:g}, got {value}")


def check_share(value: object, field: str, allow_zero: bool = False) -> None:
    x = _real(value, field)
    if not (0 <= x <= 1) or (x == 0 and not allow_zero):
        interval = "[0, 1]" if allow_zero else "(0, 1]"
        raise SizingError(field, f"must be in {interval}, got {value}")


def _opt_int(value: int | None, field: str, maximum: float = MAX_DIM, minimum: int = 1) -> None:
    if value is not None:
        check_int(value, field, minimum, maximum)


def check_weight_format(name: object, field: str) -> None:
    if name not in WEIGHT_FORMATS:
        known = ", ".join(WEIGHT_FORMATS)
        raise SizingError(field, f"unknown weight format {name!r}; known: {known}")


def check_kv_dtype(name: object, field: str) -> None:
    if name not in KV_DTYPE_BYTES:
        known = ", ".join(KV_DTYPE_BYTES)
        raise SizingError(field, f"unknown KV dtype {name!r}; known: {known}")


def check_hashable(obj: object, prefix: str) -> None:
    # Specs are cached by value, so a list where a tuple belongs is an input error, not a crash.
    try:
        hash(obj)
    except TypeError:
        for name in getattr(obj, "__dataclass_fields__", {}):
            try:
                hash(getattr(obj, name))
            except TypeError:
                raise SizingError(f"{prefix}.{name}", "must be a tuple, not a list") from None
        raise SizingError(prefix, "must be immutable (tuples, not lists)") from None


def validate_model(m: ModelSpec, prefix: str = "model") -> None:
    if not isinstance(m, ModelSpec):
        raise SizingError(prefix, f"must be a ModelSpec, got {type(m).__name__}")
    try:
        _validate_model(m, prefix)
    except TypeError:
        check_hashable(m, prefix)
        raise


# Models are reused across many scenarios; check each one once.
@lru_cache(maxsize=1024)
def _validate_model(m: ModelSpec, prefix: str) -> None:
    p = prefix
    check_int(m.total_params, f"{p}.total_params", 1, MAX_PARAMS)
    if m.active_params is not None:
        check_int(m.active_params, f"{p}.active_params", 1, MAX_PARAMS)
        if m.active_params > m.total_params:
            raise SizingError(
                f"{p}.active_params",
                f"{m.active_params:,} active is more than {m.total_params:,} total",
            )
    _opt_int(m.layers, f"{p}.layers", MAX_LAYERS)
    _opt_int(m.attention_heads, f"{p}.attention_heads")
    _opt_int(m.hidden_size, f"{p}.hidden_size")
    _opt_int(m.vocab_size, f"{p}.vocab_size", MAX_PARAMS)
    _opt_int(m.max_context_tokens, f"{p}.max_context_tokens", MAX_CONTEXT_TOKENS)
    if m.checkpoint_bytes is not None:
        check_positive(m.checkpoint_bytes, f"{p}.checkpoint_bytes", MAX_PARAMS * 4)
    check_weight_format(m.weight_format, f"{p}.weight_format")
    check_kv_dtype(m.kv_dtype, f"{p}.kv_dtype")

    for i, t in enumerate(m.tensor_groups):
        if not isinstance(t, TensorGroup):
            raise SizingError(f"{p}.tensor_groups[{i}]", "must be a TensorGroup")
        check_int(t.params, f"{p}.tensor_groups[{i}].params", 1, MAX_PARAMS)
        check_weight_format(t.weight_format, f"{p}.tensor_groups[{i}].weight_format")
    if sum(t.params for t in m.tensor_groups) > MAX_PARAMS:
        raise SizingError(f"{p}.tensor_groups", f"more than {MAX_PARAMS:g} parameters in all")

    for i, g in enumerate(m.attention):
        gp = f"{p}.attention[{i}]"
        if not isinstance(g, AttentionGroup):
            raise SizingError(gp, "must be an AttentionGroup")
        if g.kind not in ATTENTION_KINDS:
            known = ", ".join(ATTENTION_KINDS)
            raise SizingError(f"{gp}.kind", f"unknown attention kind {g.kind!r}; known: {known}")
        check_int(g.layers, f"{gp}.layers", 1, MAX_LAYERS)
        for name in (
            "kv_heads",
            "head_dim",
            "kv_lora_rank",
            "qk_rope_head_dim",
            "state_heads",
            "state_key_dim",
            "state_value_dim",
        ):
            _opt_int(getattr(g, name), f"{gp}.{name}")
        _opt_int(g.window_tokens, f"{gp}.window_tokens", MAX_CONTEXT_TOKENS)
        _opt_int(g.conv_state_elements, f"{gp}.conv_state_elements", MAX_PARAMS, minimum=0)
        check_positive(g.state_bytes_per_element, f"{gp}.state_bytes_per_element", 64)
    if m.layers is not None and m.attention:
        in_groups = sum(g.layers for g in m.attention)
        if in_groups != m.layers:
            raise SizingError(
                f"{p}.attention",
                f"the attention groups cover {in_groups} layers, the model has {m.layers}",
            )

    e = m.experts
    if e is not None:
        ep = f"{p}.experts"
        if not isinstance(e, ExpertSpec):
            raise SizingError(ep, "must be an ExpertSpec")
        check_int(e.routed, f"{ep}.routed", 1, MAX_DIM)
        check_int(e.active, f"{ep}.active", 1, MAX_DIM)
        if e.active > e.routed:
            raise SizingError(f"{ep}.active", f"{e.active} active of only {e.routed} routed")
        check_int(e.shared, f"{ep}.shared", 0, MAX_DIM)
        _opt_int(e.params_per_expert, f"{ep}.params_per_expert", MAX_PARAMS)
        _opt_int(e.moe_layers, f"{ep}.moe_layers", MAX_LAYERS)
        if e.moe_layers is not None and m.layers is not None and e.moe_layers > m.layers:
            raise SizingError(f"{ep}.moe_layers", f"{e.moe_layers} of only {m.layers} layers")
        if e.params_per_expert is not None and e.moe_layers is not None:
            routed_params = e.routed * e.params_per_expert * e.moe_layers
            if routed_params > m.total_params:
                raise SizingError(
                    f"{ep}.params_per_expert",
                    f"routed experts alone hold {routed_params:,} parameters, more than "
                    f"the {m.total_params:,} total",
                )


def validate_accelerator(a: AcceleratorSpec, prefix: str = "accelerator") -> None:
    if not isinstance(a, AcceleratorSpec):
        raise SizingError(prefix, f"must be an AcceleratorSpec, got {type(a).__name__}")
    try:
        _validate_accelerator(a, prefix)
    except TypeError:
        check_hashable(a, prefix)
        raise


@lru_cache(maxsize=1024)
def _validate_accelerator(a: AcceleratorSpec, prefix: str) -> None:
    p = prefix
    check_positive(a.memory_gb, f"{p}.memory_gb", MAX_MEMORY_GB)
    if a.bandwidth_tb_s is not None:
        check_positive(a.bandwidth_tb_s, f"{p}.bandwidth_tb_s", MAX_BANDWIDTH_TB_S)
    for name in ("bf16_tflops", "fp8_tflops", "fp4_tflops"):
        value = getattr(a, name)
        if value is not None:
            check_positive(value, f"{p}.{name}", MAX_TFLOPS)
    if a.interconnect_gb_s is not None:
        check_positive(a.interconnect_gb_s, f"{p}.interconnect_gb_s", MAX_BANDWIDTH_TB_S * 1000)
    check_int(a.gpus_per_node, f"{p}.gpus_per_node", 1, MAX_GPUS_PER_NODE)
    if a.power_w is not None:
        check_positive(a.power_w, f"{p}.power_w", 1e7)


def validate_workload(w: Workload, model: ModelSpec | None = None) -> None:
    """`model` only lends its maximum context: validate the model itself first."""
    if not isinstance(w, Workload):
        raise SizingError("workload", f"must be a Workload, got {type(w).__name__}")
    limit = None if model is None else model.max_context_tokens
    try:
        _validate_workload(w, limit)
    except TypeError:
        check_hashable(w, "workload")
        raise


@lru_cache(maxsize=1024)
def _validate_workload(w: Workload, limit: int | None) -> None:
    p = "workload"
    check_int(w.context_tokens, f"{p}.context_tokens", 1, MAX_CONTEXT_TOKENS)
    if limit is not None and w.context_tokens > limit:
        raise SizingError(
            f"{p}.context_tokens",
            f"{w.context_tokens:,} tokens is more than the model's maximum context of {limit:,}",
        )
    check_int(w.concurrency, f"{p}.concurrency", 1, MAX_CONCURRENCY)
    if w.kv_dtype is not None:
        check_kv_dtype(w.kv_dtype, f"{p}.kv_dtype")
    check_positive(w.hours_per_day, f"{p}.hours_per_day", 24)
    check_int(w.days_per_month, f"{p}.days_per_month", 1, 31)
    check_share(w.utilisation, f"{p}.utilisation")
    check_non_negative(w.monthly_input_tokens, f"{p}.monthly_input_tokens", MAX_MONTHLY_TOKENS)
    check_share(w.cached_input_share, f"{p}.cached_input_share", allow_zero=True)
    check_non_negative(w.monthly_output_tokens, f"{p}.monthly_output_tokens", MAX_MONTHLY_TOKENS)
    check_int(w.prompt_tokens, f"{p}.prompt_tokens", 1, MAX_CONTEXT_TOKENS)


def validate_assumptions(a: Assumptions) -> None:
    if not isinstance(a, Assumptions):
        raise SizingError("assumptions", f"must be an Assumptions, got {type(a).__name__}")
    try:
        _validate_assumptions(a)
    except TypeError:
        check_hashable(a, "assumptions")
        raise


@lru_cache(maxsize=256)
def _validate_assumptions(a: Assumptions) -> None:
    p = "assumptions"
    check_non_negative(a.runtime_overhead_gb, f"{p}.runtime_overhead_gb", MAX_MEMORY_GB)
    check_share(a.memory_utilisation_cap, f"{p}.memory_utilisation_cap")
    check_non_negative(a.activation_reserve_gb, f"{p}.activation_reserve_gb", MAX_MEMORY_GB)
    check_share(a.bandwidth_efficiency, f"{p}.bandwidth_efficiency")
    check_share(a.compute_efficiency, f"{p}.compute_efficiency")
    check_positive(a.download_gb_s, f"{p}.download_gb_s", 1e6)
    check_positive(a.ram_bandwidth_gb_s, f"{p}.ram_bandwidth_gb_s", 1e6)
    check_int(a.max_nodes, f"{p}.max_nodes", 1, MAX_NODES)


def validate_prices(pr: Prices) -> None:
    if not isinstance(pr, Prices):
        raise SizingError("prices", f"must be a Prices, got {type(pr).__name__}")
    try:
        _validate_prices(pr)
    except TypeError:
        check_hashable(pr, "prices")
        raise


@lru_cache(maxsize=256)
def _validate_prices(pr: Prices) -> None:
    p = "prices"
    if pr.usd_per_gpu_hour is not None:
        # a free GPU-hour would make tokens per dollar infinite
        check_positive(pr.usd_per_gpu_hour, f"{p}.usd_per_gpu_hour", MAX_USD)
    for name in ("api_usd_per_m_input_hit", "api_usd_per_m_input_miss", "api_usd_per_m_output"):
        value = getattr(pr, name)
        if value is not None:
            check_non_negative(value, f"{p}.{name}", MAX_USD)
    check_non_negative(pr.gateway_usd_per_month, f"{p}.gateway_usd_per_month", MAX_USD)


def validate_scenario(s: Scenario) -> None:
    if not isinstance(s, Scenario):
        raise SizingError("scenario", f"must be a Scenario, got {type(s).__name__}")
    validate_model(s.model)
    validate_accelerator(s.accelerator)
    validate_workload(s.workload, s.model)
    validate_assumptions(s.assumptions)
    validate_prices(s.prices)
