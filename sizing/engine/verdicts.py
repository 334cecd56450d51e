"""One sentence per tier, with numbers, that a planner can paste into a report (spec 3.9)."""

from __future__ import annotations

from dataclasses import dataclass

from .fmt import fmt_bytes, fmt_duration, fmt_gb, fmt_int, fmt_tokens, fmt_usd, sig
from .layout import Layout
from .specs import Scenario
from .speed import SpeedEstimate
from .tiers import BreakEven, OneCardPick, Tier1Cost, Tier2Fit, Tier3Cost
from .weights import WeightsResult


@dataclass(frozen=True)
class Verdicts:
    single_gpu: str  # "K3 cannot run on one GPU: 1.49 TB of weights, the largest card holds ..."
    tier1: str
    tier2: str
    tier3: str
    break_even: str


def single_gpu_verdict(
    name: str,
    w: WeightsResult,
    largest_name: str,
    largest_gb: float,
    chosen_name: str,
    chosen_gb: float,
) -> str:
    """Whether the weights fit on one GPU: the largest card in the catalog, then the chosen one
    (weights only: the cache and activations need room too)."""
    if w.weights_bytes > largest_gb * 1e9:
        return (
            f"{name} cannot run on one GPU: {fmt_bytes(w.weights_bytes)} of weights, "
            f"the largest card holds {fmt_gb(largest_gb)}."
        )
    if w.weights_bytes > chosen_gb * 1e9:
        return (
            f"{name}'s weights fit on one GPU, but not on one {chosen_name}: "
            f"{fmt_bytes(w.weights_bytes)} of weights, the {chosen_name} holds "
            f"{fmt_gb(chosen_gb)} and the {largest_name} {fmt_gb(largest_gb)}."
        )
    return (
        f"{name}'s weights fit on one GPU: {fmt_bytes(w.weights_bytes)} of weights, "
        f"the {chosen_name} holds {fmt_gb(chosen_gb)}."
    )


def _schedule(hours_per_day: float, days: int) -> str:
    if hours_per_day >= 24:
        return "always on"
    return f"{sig(hours_per_day)} hours a day, {days} days a month"


def tier1_verdict(
    s: Scenario,
    layout: Layout,
    cost: Tier1Cost | None,
    speed: SpeedEstimate | None,
    w: WeightsResult,
) -> str:
    name, acc = s.model.name, s.accelerator.name
    if not layout.fits or cost is None:
        return f"Renting does not work on {acc}: {layout.reason}."
    nodes = f"{layout.nodes} node" + ("s" if layout.nodes > 1 else "")
    split = f"TP {layout.tp}" + (f" x EP {layout.ep}" if layout.ep > 1 else "")
    split += f" x PP {layout.pp}" if layout.pp > 1 else ""
    kv = "" if layout.kv_included else "; weights and overhead only, the KV cache is unknown"
    head = f"{name} needs {layout.gpus} x {acc} ({nodes}, {split}{kv})"
    schedule = _schedule(cost.hours_per_day, cost.days_per_month)
    hours = f"{fmt_int(cost.gpu_hours_per_month)} GPU-hours a month {schedule}"
    if cost.usd_per_month is None or cost.usd_per_gpu_hour is None:
        return f"{head}: {hours}; add a GPU-hour price to cost it."
    cold = (
        f"each cold start bills {fmt_duration(cost.cold_start_s)} "
        f"({fmt_usd(cost.cold_start_usd or 0.0)}) to download {fmt_bytes(w.checkpoint_bytes)}"
    )
    rate = ""
    if speed is not None and speed.tokens_per_s is not None and cost.tokens_per_s_per_usd_per_hour:
        rate = (
            f", about {fmt_int(speed.tokens_per_s)} tokens/s "
            f"({sig(cost.tokens_per_s_per_usd_per_hour)} tokens/s per dollar-hour)"
        )
    return (
        f"{head}: {hours} = {fmt_usd(cost.usd_per_month)} at "
        f"{fmt_usd(cost.usd_per_gpu_hour)} per GPU-hour{rate}; {cold}."
    )


def tier2_verdict(name: str, acc: str, fit: Tier2Fit, pick: OneCardPick) -> str:
    instead = "nothing from the article's list fits"
    if pick.largest_dense_4bit is not None:
        instead = f"a {pick.largest_dense_4bit} dense model at 4-bit"
        if pick.moe_8bit_fits:
            instead += " (or a 30B-class MoE at 8-bit)"
    if fit.fits:
        room = ""
        if fit.max_context_tokens is not None:
            room = f", leaving room for {fmt_tokens(fit.max_context_tokens)} tokens of context"
        kv = "" if fit.kv_known else " before the KV cache, which is unknown"
        return (
            f"{name} fits on one {acc}: {fmt_gb(fit.needed_gb)} of {fmt_gb(fit.memory_gb)}"
            f"{kv}{room}."
        )
    offload = ""
    if fit.offload is not None and fit.offload.seconds_per_token is not None:
        offload = (
            f"; llama.cpp offloading {fmt_bytes(fit.offload.ram_bytes)} to system RAM would "
            f"take about {sig(fit.offload.seconds_per_token, 2)} seconds a token, "
            "which proves the file parses, not that it can serve users"
        )
    return (
        f"This tier does not run {name}: it needs {fmt_gb(fit.needed_gb)} and one {acc} "
        f"holds {fmt_gb(fit.memory_gb)}; the card runs {instead} instead{offload}."
    )


def tier3_verdict(cost: Tier3Cost | None) -> str:
    if cost is None:
        return "Add the API's per-million-token prices to cost the hosted tier."
    inputs = cost.input_hit_tokens + cost.input_miss_tokens
    cached = ""
    if inputs:
        cached = f" ({cost.input_hit_tokens / inputs:.0%} cache hits)"
    gateway = ""
    if cost.usd_gateway:
        gateway = f", {fmt_usd(cost.usd_gateway)} of it the self-hosted gateway"
    return (
        f"The hosted API costs {fmt_usd(cost.usd_per_month)} a month for "
        f"{fmt_tokens(inputs)} input tokens{cached} and {fmt_tokens(cost.output_tokens)} "
        f"output tokens{gateway}."
    )


def break_even_verdict(be: BreakEven | None, layout: Layout) -> str:
    if be is None:
        return "Break-even needs both a GPU-hour price and an API output price."
    if be.output_tokens_per_month is None:
        return f"Renting never beats the API here: {be.reason}."
    if be.output_tokens_per_month == 0:
        return "Renting costs no more than the API's gateway alone, at any volume."
    return (
        f"Renting {layout.gpus} GPUs ({fmt_usd(be.selfhost_usd_per_replica_month)} a month) "
        f"costs the same as {fmt_tokens(be.output_tokens_per_month)} output tokens a month "
        f"through the API (about {fmt_tokens(be.output_tokens_per_day or 0.0)} a day); it is "
        "cheaper only above that volume, with the cluster kept busy."
    )
