"""GPU counts: the weights-only floor (spec 3.3) and a recommended layout with its flags (3.4)."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from functools import lru_cache

from .fmt import fmt_bytes, fmt_gb
from .kv import KVProfile, group_bytes_per_user, kv_profile
from .specs import AcceleratorSpec, Assumptions, ModelSpec, Workload
from .weights import WeightsResult, weights

# Tolerance for "exactly n GPUs": 1.4e12 / 80e9 = 17.5 -> 18, but 1.6e12 / 80e9 computed as
# 20.000000000000004 must stay 20. Relative, so it holds at any scale.
_CEIL_RTOL = 1e-12

# Ports from the SGLang and vLLM multi-node docs' examples.
SGLANG_DIST_PORT = 20000
VLLM_DP_RPC_PORT = 13345


@dataclass(frozen=True)
class MemorySplit:
    """One GPU's memory, GB (decimal). weights + kv + activations + overhead + free = memory."""

    memory_gb: float
    cap_gb: float  # memory x utilisation cap: what the server may use
    weights_gb: float
    kv_gb: float
    activations_gb: float
    overhead_gb: float
    used_gb: float
    free_gb: float


@dataclass(frozen=True)
class Layout:
    fits: bool
    reason: str  # why it does not fit; empty when it does
    gpus: int
    nodes: int
    tp: int
    ep: int  # 1 for dense models
    pp: int  # pipeline stages: dense models whose heads cannot take more TP
    kv_included: bool  # False: the KV is unknown and this counts weights + overhead only
    per_gpu: MemorySplit | None
    aggregate_memory_gb: float
    sglang_command: str
    vllm_command: str
    launch_note: str  # how to run the commands on more than one node
    note: str  # what was skipped and why


def ceil_div(numerator: float, denominator: float) -> int:
    q = numerator / denominator
    nearest = round(q)
    if abs(q - nearest) <= _CEIL_RTOL * max(1.0, abs(q)):
        return int(nearest)
    return math.ceil(q)


def min_gpus_for_weights(weights_bytes: float, memory_gb: float) -> int:
    """A floor, not a plan: no KV, no activations, a perfectly even split."""
    return max(1, ceil_div(weights_bytes, memory_gb * 1e9))


@lru_cache(maxsize=256)
def candidate_gpu_counts(gpus_per_node: int, max_nodes: int) -> tuple[int, ...]:
    # 1, 2, 4, 8 ... inside a node, then whole nodes
    counts = [n for n in (2**i for i in range(20)) if n < gpus_per_node]
    counts.append(gpus_per_node)
    counts.extend(gpus_per_node * k for k in range(2, max_nodes + 1))
    return tuple(counts)


@lru_cache(maxsize=4096)
def split_parallel(
    gpus: int, gpus_per_node: int, attention_heads: int | None, routed_experts: int | None
) -> tuple[int, int, int] | None:
    """(tp, ep, pp) with tp x ep x pp = gpus, or None when no split works.

    TP stays inside a node (it all-reduces every layer, so it wants NVLink) and must divide the
    attention heads; with the heads unknown we only allow powers of two, which every published
    head count accepts. MoE: EP takes the rest and must divide the routed experts (SGLang's
    TP x EP = GPUs). Dense: pipeline stages take the rest, across nodes where they cost one
    activation transfer per stage instead of an all-reduce per layer.
    """
    for tp in range(min(gpus, gpus_per_node), 0, -1):
        if gpus % tp:
            continue
        if attention_heads is not None:
            if attention_heads % tp:
                continue
        elif tp & (tp - 1):
            continue
        rest = gpus // tp
        if routed_experts is None:
            return tp, 1, rest
        if routed_experts % rest == 0:
            return tp, rest, 1
    return None


def _kv_per_gpu_bytes(
    profile: KVProfile, context_tokens: int, concurrency: int, tp: int, ep: int, pp: int
) -> float:
    # EP ranks run attention data-parallel (each serves 1/ep of the users), pipeline stages
    # each hold their own layers, and TP splits a cache only as far as it has heads.
    total = 0.0
    for g in profile.groups:
        total += group_bytes_per_user(g, context_tokens) / min(tp, g.tp_shards_max)
    return total * concurrency / (ep * pp)


def _weights_per_gpu_bytes(w: WeightsResult, gpus: int, tp: int, pp: int) -> float:
    if w.routed_expert_bytes is None or w.dense_bytes is None:
        return w.weights_bytes / gpus
    # non-expert weights are split by TP and PP only (copied on every EP rank); experts by all
    return w.dense_bytes / (tp * pp) + w.routed_expert_bytes / gpus


def _commands(
    model: ModelSpec,
    gpus: int,
    nodes: int,
    tp: int,
    ep: int,
    pp: int,
    workload: Workload,
    assumptions: Assumptions,
    kv_dtype: str,
) -> tuple[str, str, str]:
    path = shlex.quote(model.repo_id or model.name)
    cap = f"{assumptions.memory_utilisation_cap:g}"
    context = workload.context_tokens
    moe = model.experts is not None

    sg = [f"python3 -m sglang.launch_server --model-path {path} --tp-size {tp}"]
    if moe:
        sg.append(f"--ep-size {ep}")
    if pp > 1:
        sg.append(f"--pp-size {pp}")
    sg.append(f"--context-length {context} --mem-fraction-static {cap}")
    if kv_dtype == "fp8":
        sg.append("--kv-cache-dtype fp8_e4m3")
    if nodes > 1:
        sg.append(f"--nnodes {nodes} --node-rank <i> --dist-init-addr <head-ip>:{SGLANG_DIST_PORT}")
    sg.append("--host 0.0.0.0 --port 30000")

    vl = [f"vllm serve {path} --tensor-parallel-size {tp}"]
    if pp > 1:
        vl.append(f"--pipeline-parallel-size {pp}")
    if ep > 1:
        # vLLM shards experts over TP x DP; attention runs data-parallel across the DP ranks
        vl.append(f"--data-parallel-size {ep} --enable-expert-parallel")
    vl.append(f"--max-model-len {context} --gpu-memory-utilization {cap}")
    if kv_dtype == "fp8":
        vl.append("--kv-cache-dtype fp8")

    note = ""
    if nodes > 1:
        if ep > 1:
            local = ep // nodes
            vl.append(
                f"--data-parallel-size-local {local} --data-parallel-address <head-ip> "
                f"--data-parallel-rpc-port {VLLM_DP_RPC_PORT}"
            )
            note = (
                f"Run on each of the {nodes} nodes, i = 0 to {nodes - 1} (node 0 is the head). "
                f"vLLM: nodes other than the head also add --headless "
                f"--data-parallel-start-rank <{local} x i>."
            )
        else:
            vl.append("--distributed-executor-backend ray")
            note = (
                f"Run SGLang on each of the {nodes} nodes, i = 0 to {nodes - 1}. vLLM: start a "
                f"Ray cluster over the {nodes} nodes first, then run the command on the head."
            )
    return " ".join(sg), " ".join(vl), note


def _no_fit(reason: str, kv_included: bool, note: str = "") -> Layout:
    return Layout(False, reason, 0, 0, 0, 0, 0, kv_included, None, 0.0, "", "", "", note)


def plan_layout(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    gpus: int,
    workload: Workload | None = None,
    assumptions: Assumptions | None = None,
    weight_format: str | None = None,
) -> Layout:
    """This model on exactly `gpus` accelerators: does it fit, and how to launch it."""
    workload = workload or Workload()
    assumptions = assumptions or Assumptions()
    w = weights(model, weight_format)
    profile = kv_profile(model, workload.kv_dtype)
    return _plan(model, accelerator, gpus, workload, assumptions, w, profile)


def _split_reason(model: ModelSpec, gpus: int, gpn: int) -> str:
    if gpus > gpn and gpus % gpn:
        return f"{gpus} GPUs is not a whole number of {gpn}-GPU nodes"
    # only MoE models get here otherwise: dense ones can always fall back on PP
    heads = model.attention_heads
    tp_rule = f"dividing {heads} heads" if heads else "a power of two (heads unknown)"
    routed = model.experts.routed if model.experts is not None else None
    return (
        f"{gpus} GPUs: no TP x EP split with TP <= {gpn} and {tp_rule} and EP dividing "
        f"{routed} routed experts"
    )


def _per_gpu(
    model: ModelSpec,
    acc: AcceleratorSpec,
    gpus: int,
    workload: Workload,
    w: WeightsResult,
    profile: KVProfile,
) -> tuple[int, int, int, float, float] | None:
    """(tp, ep, pp, weights GB, KV GB) on each GPU, or None when `gpus` has no valid split."""
    gpn = acc.gpus_per_node
    if gpus > gpn and gpus % gpn:
        return None
    routed = model.experts.routed if model.experts is not None else None
    split = split_parallel(gpus, gpn, model.attention_heads, routed)
    if split is None:
        return None
    tp, ep, pp = split
    weights_gb = _weights_per_gpu_bytes(w, gpus, tp, pp) / 1e9
    kv_gb = 0.0
    if profile.known:
        kv_bytes = _kv_per_gpu_bytes(
            profile, workload.context_tokens, workload.concurrency, tp, ep, pp
        )
        kv_gb = kv_bytes / 1e9
    return tp, ep, pp, weights_gb, kv_gb


def _plan(
    model: ModelSpec,
    acc: AcceleratorSpec,
    gpus: int,
    workload: Workload,
    assumptions: Assumptions,
    w: WeightsResult,
    profile: KVProfile,
    note: str = "",
) -> Layout:
    shares = _per_gpu(model, acc, gpus, workload, w, profile)
    if shares is None:
        return _no_fit(_split_reason(model, gpus, acc.gpus_per_node), profile.known)
    tp, ep, pp, weights_gb, kv_gb = shares
    memory = acc.memory_gb
    cap = memory * assumptions.memory_utilisation_cap
    act, overhead = assumptions.activation_reserve_gb, assumptions.runtime_overhead_gb
    used = weights_gb + kv_gb + act + overhead
    split_mem = MemorySplit(memory, cap, weights_gb, kv_gb, act, overhead, used, memory - used)
    gpn = acc.gpus_per_node
    nodes = gpus // gpn if gpus >= gpn else 1
    fits = used <= cap * (1 + _CEIL_RTOL)
    reason = sg = vl = launch_note = ""
    if fits:
        sg, vl, launch_note = _commands(
            model, gpus, nodes, tp, ep, pp, workload, assumptions, profile.kv_dtype
        )
    else:
        reason = (
            f"{gpus} x {acc.name}: each GPU needs {fmt_gb(used)}, more than the "
            f"{fmt_gb(cap)} usable ({assumptions.memory_utilisation_cap:.0%} of {fmt_gb(memory)})"
        )
    return Layout(
        fits, reason, gpus, nodes, tp, ep, pp, profile.known, split_mem,
        gpus * float(memory), sg, vl, launch_note, note,
    )  # fmt: skip


def recommend_layout(
    model: ModelSpec,
    accelerator: AcceleratorSpec,
    workload: Workload | None = None,
    assumptions: Assumptions | None = None,
    weight_format: str | None = None,
) -> Layout:
    """The smallest valid layout that holds weights + KV + activations + overhead on every GPU."""
    workload = workload or Workload()
    assumptions = assumptions or Assumptions()
    w = weights(model, weight_format)
    profile = kv_profile(model, workload.kv_dtype)
    return _recommend(model, accelerator, workload, assumptions, w, profile)


def _recommend(
    model: ModelSpec,
    acc: AcceleratorSpec,
    workload: Workload,
    assumptions: Assumptions,
    w: WeightsResult,
    profile: KVProfile,
) -> Layout:
    cap = acc.memory_gb * assumptions.memory_utilisation_cap
    room_gb = cap - assumptions.activation_reserve_gb - assumptions.runtime_overhead_gb
    if room_gb <= 0:
        return _no_fit(
            f"the activation reserve and runtime overhead alone fill the {fmt_gb(cap)} usable "
            f"on one {acc.name}",
            profile.known,
        )
    # No layout with fewer GPUs can hold even an even share of the weights and the KV cache
    # (an even share is the best case: dense weights copy per EP rank, MLA latents per TP rank).
    kv_total = 0.0
    if profile.known:
        per_user = sum(group_bytes_per_user(g, workload.context_tokens) for g in profile.groups)
        kv_total = per_user * workload.concurrency
    lower = (w.weights_bytes + kv_total) / (room_gb * 1e9) * (1 - _CEIL_RTOL)
    limit = cap * (1 + _CEIL_RTOL)
    fixed = assumptions.activation_reserve_gb + assumptions.runtime_overhead_gb
    skipped: list[str] = []
    last = 0
    for gpus in candidate_gpu_counts(acc.gpus_per_node, assumptions.max_nodes):
        if gpus < lower:
            continue
        shares = _per_gpu(model, acc, gpus, workload, w, profile)
        if shares is None:
            if len(skipped) < 3:
                skipped.append(_split_reason(model, gpus, acc.gpus_per_node))
            continue
        if shares[3] + shares[4] + fixed <= limit:
            note = "; ".join(skipped)
            if not profile.known:
                note = ("weights + overhead only: the KV cache is unknown. " + note).strip()
            return _plan(model, acc, gpus, workload, assumptions, w, profile, note)
        last = gpus
    most = acc.gpus_per_node * assumptions.max_nodes
    reason = (
        f"{fmt_bytes(w.weights_bytes)} of weights"
        + (" plus the KV cache" if profile.known else "")
        + f" do not fit in {assumptions.max_nodes} nodes ({most} x {acc.name})"
    )
    if last:
        reason += ": " + _plan(model, acc, last, workload, assumptions, w, profile).reason
    return _no_fit(reason, profile.known, "; ".join(skipped))
