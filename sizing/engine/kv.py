"""KV cache and recurrent state (spec 3.2). An unpublished dimension makes the result unknown."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .fmt import GIB
from .formats import KV_DTYPE_BYTES
from .specs import FULL, LINEAR, MLA, SLIDING, ModelSpec, Workload
from .validate import MAX_CONTEXT_TOKENS, check_kv_dtype

# The article's way to get a figure the vendor has not published (K3's latent dimensions).
HOW_TO_MEASURE_KV = (
    "Measure it on your own system: start the server with a small --max-model-len, watch "
    "memory with nvidia-smi, and raise the limit until allocation fails."
)

_NEEDED = {
    FULL: ("kv_heads", "head_dim"),
    SLIDING: ("kv_heads", "head_dim", "window_tokens"),
    MLA: ("kv_lora_rank", "qk_rope_head_dim"),
    LINEAR: ("state_heads", "state_key_dim", "state_value_dim", "conv_state_elements"),
}


@dataclass(frozen=True)
class KVGroup:
    kind: str
    layers: int
    bytes_per_token: float  # all layers of the group; 0 for linear
    window_tokens: int | None  # sliding: the cache stops growing here
    state_bytes_per_sequence: float  # linear: fixed state, all layers of the group
    # How many ways tensor parallelism can split this cache: KV heads for full/sliding, state
    # heads for linear, 1 for MLA (the one latent is replicated on every TP rank).
    tp_shards_max: int


@dataclass(frozen=True)
class KVProfile:
    known: bool
    missing: tuple[str, ...]  # e.g. "model.attention[1].kv_lora_rank"
    kv_dtype: str
    kv_bytes_per_token: float | None  # every growing layer, sliding ones below their window
    state_bytes_per_sequence: float | None  # linear layers' fixed state
    groups: tuple[KVGroup, ...]


@dataclass(frozen=True)
class KVEstimate:
    known: bool
    missing: tuple[str, ...]
    how_to_measure: str  # empty when known
    kv_dtype: str
    context_tokens: int
    concurrency: int
    kv_bytes_per_token: float | None
    state_bytes_per_sequence: float | None
    kv_bytes_per_user: float | None  # at context_tokens, state included
    kv_gib_per_user: float | None
    kv_bytes_total: float | None  # x concurrency


@lru_cache(maxsize=2048)
def kv_profile(model: ModelSpec, kv_dtype: str | None = None) -> KVProfile:
    dtype = kv_dtype or model.kv_dtype
    check_kv_dtype(dtype, "kv_dtype")
    element = KV_DTYPE_BYTES[dtype]
    if not model.attention:
        return KVProfile(False, ("model.attention",), dtype, None, None, ())

    missing: list[str] = []
    groups: list[KVGroup] = []
    for i, g in enumerate(model.attention):
        # getattr: the dims are checked for None here, which mypy cannot follow
        d: dict[str, int] = {n: getattr(g, n) for n in _NEEDED[g.kind]}
        absent = [f"model.attention[{i}].{n}" for n, v in d.items() if v is None]
        if absent:
            missing.extend(absent)
            continue
        if g.kind == LINEAR:
            per_layer = (
                d["state_heads"] * d["state_key_dim"] * d["state_value_dim"]
                + d["conv_state_elements"]
            )
            state = per_layer * g.state_bytes_per_element * g.layers
            groups.append(KVGroup(g.kind, g.layers, 0.0, None, state, d["state_heads"]))
        elif g.kind == MLA:
            # one compressed latent plus the decoupled RoPE key per token, no x2 for K and V
            per_token = (d["kv_lora_rank"] + d["qk_rope_head_dim"]) * element * g.layers
            groups.append(KVGroup(g.kind, g.layers, per_token, None, 0.0, 1))
        else:
            per_token = 2 * d["kv_heads"] * d["head_dim"] * element * g.layers  # K and V
            window = d.get("window_tokens")
            groups.append(KVGroup(g.kind, g.layers, per_token, window, 0.0, d["kv_heads"]))
    if missing:
        return KVProfile(False, tuple(missing), dtype, None, None, ())
    return KVProfile(
        True,
        (),
        dtype,
        sum(g.bytes_per_token for g in groups),
        sum(g.state_bytes_per_sequence for g in groups),
        tuple(groups),
    )


def group_bytes_per_user(g: KVGroup, context_tokens: int) -> float:
    tokens = context_tokens if g.window_tokens is None else min(context_tokens, g.window_tokens)
    return g.bytes_per_token * tokens + g.state_bytes_per_sequence


def bytes_per_user(profile: KVProfile, context_tokens: int) -> float | None:
    if not profile.known:
        return None
    return sum(group_bytes_per_user(g, context_tokens) for g in profile.groups)


def kv_estimate(model: ModelSpec, workload: Workload) -> KVEstimate:
    profile = kv_profile(model, workload.kv_dtype)
    return estimate_from_profile(profile, workload.context_tokens, workload.concurrency)


def estimate_from_profile(profile: KVProfile, context_tokens: int, concurrency: int) -> KVEstimate:
    per_user = bytes_per_user(profile, context_tokens)
    if per_user is None:
        return KVEstimate(
            False, profile.missing, HOW_TO_MEASURE_KV, profile.kv_dtype,
            context_tokens, concurrency, None, None, None, None, None,
        )  # fmt: skip
    return KVEstimate(
        True, (), "", profile.kv_dtype, context_tokens, concurrency,
        profile.kv_bytes_per_token, profile.state_bytes_per_sequence,
        per_user, per_user / GIB, per_user * concurrency,
    )  # fmt: skip


def max_context_tokens(
    profile: KVProfile, free_bytes: float, concurrency: int, cap: int = MAX_CONTEXT_TOKENS
) -> int | None:
    """Longest context every one of `concurrency` users can have in `free_bytes`.

    None when the KV is unknown; 0 when not even the fixed state fits.
    """
    if not profile.known:
        return None
    budget = free_bytes / concurrency - (profile.state_bytes_per_sequence or 0.0)
    if budget < 0:
        return 0
    # Cost per user is piecewise linear in L: each sliding group stops growing at its window.
    windows = sorted(
        (g.window_tokens, g.bytes_per_token) for g in profile.groups if g.window_tokens is not None
    )
    slope = sum(g.bytes_per_token for g in profile.groups)
    tokens, used = 0, 0.0
    for window, per_token in windows:
        if window > tokens:
            if slope > 0 and used + slope * (window - tokens) > budget:
                break
            used += slope * (window - tokens)
            tokens = window
        slope -= per_token
    if slope <= 1e-12:  # nothing grows past the last window
        return cap
    # the epsilon keeps an exact fit (8192.0 computed as 8191.9999...) from losing a token
    return min(cap, tokens + math.floor((budget - used) / slope + 1e-9))
