"""One call that returns every figure for a scenario, and the weights-only floor table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import SizingError
from .kv import KVEstimate, estimate_from_profile, kv_profile
from .layout import Layout, _recommend, min_gpus_for_weights
from .specs import AcceleratorSpec, ModelSpec, Scenario
from .speed import SpeedEstimate, _speed
from .tiers import (
    BreakEven,
    OneCardPick,
    Tier1Cost,
    Tier2Fit,
    Tier3Cost,
    api_monthly_cost,
    break_even,
    one_card_pick,
    tier1_cost,
    tier2_fit,
)
from .validate import validate_accelerator, validate_model, validate_scenario
from .verdicts import (
    Verdicts,
    break_even_verdict,
    single_gpu_verdict,
    tier1_verdict,
    tier2_verdict,
    tier3_verdict,
)
from .weights import WeightsResult, weights


@dataclass(frozen=True)
class FloorRow:
    accelerator_name: str
    memory_gb: float
    weight_format: str
    weights_bytes: float
    min_gpus: int
    idealised_format: str | None  # "4-bit" when the format stores scales (MXFP4)
    idealised_weights_bytes: float | None
    min_gpus_idealised: int | None  # the article's 18/10/8/5 beside MXFP4's 19/11/8/6


@dataclass(frozen=True)
class Tier2Result:
    accelerator_name: str
    runs_scenario_model: bool  # False for K3: this tier does not run the big model
    scenario_model: Tier2Fit
    models: tuple[Tier2Fit, ...]  # the smaller models asked about
    one_card: OneCardPick  # the article's one-card list for this card's memory


@dataclass(frozen=True)
class ScenarioResult:
    model_name: str
    accelerator_name: str
    weights_bytes: float
    weights: WeightsResult
    kv_known: bool
    kv_bytes_per_token: float | None
    state_bytes_per_sequence: float | None
    kv_bytes_per_user: float | None
    kv: KVEstimate
    min_gpus_for_weights: int
    min_gpus_for_weights_idealised: int | None
    layout: Layout
    speed: SpeedEstimate | None  # None when no layout fits
    decode_tokens_per_s: float | None
    tokens_per_s_per_usd_per_hour: float | None  # (tokens/s) / (USD/h), at the utilisation
    tier1: Tier1Cost | None
    tier1_usd_per_month: float | None
    tier2: Tier2Result
    tier3: Tier3Cost | None
    tier3_usd_per_month: float | None
    break_even: BreakEven | None
    break_even_output_tokens_per_month: float | None
    floor: tuple[FloorRow, ...]  # the weights-only floor on every catalog accelerator
    verdicts: Verdicts


def _floor_row(w: WeightsResult, ideal: WeightsResult | None, acc: AcceleratorSpec) -> FloorRow:
    return FloorRow(
        acc.name,
        acc.memory_gb,
        w.weight_format,
        w.weights_bytes,
        min_gpus_for_weights(w.weights_bytes, acc.memory_gb),
        w.idealised_format,
        w.idealised_bytes,
        None if ideal is None else min_gpus_for_weights(ideal.weights_bytes, acc.memory_gb),
    )


def floor_table(
    model: ModelSpec, accelerators: Sequence[AcceleratorSpec], weight_format: str | None = None
) -> tuple[FloorRow, ...]:
    validate_model(model)
    for i, acc in enumerate(accelerators):
        validate_accelerator(acc, f"catalog[{i}]")
    w = weights(model, weight_format)
    ideal = weights(model, w.idealised_format) if w.idealised_format else None
    return tuple(_floor_row(w, ideal, acc) for acc in accelerators)


def evaluate(
    scenario: Scenario,
    catalog: Sequence[AcceleratorSpec] = (),
    tier2_models: Sequence[ModelSpec] = (),
) -> ScenarioResult:
    validate_scenario(scenario)
    for i, acc in enumerate(catalog):
        validate_accelerator(acc, f"catalog[{i}]")
    for i, m in enumerate(tier2_models):
        validate_model(m, f"tier2_models[{i}]")
    model, acc, wl = scenario.model, scenario.accelerator, scenario.workload
    prices, assume = scenario.prices, scenario.assumptions

    w = weights(model)
    ideal = weights(model, w.idealised_format) if w.idealised_format else None
    profile = kv_profile(model, wl.kv_dtype)
    kv = estimate_from_profile(profile, wl.context_tokens, wl.concurrency)
    floor = tuple(_floor_row(w, ideal, a) for a in catalog)
    own_floor = _floor_row(w, ideal, acc)

    layout = _recommend(model, acc, wl, assume, w, profile)
    speed = t1 = None
    if layout.fits:
        speed = _speed(model, acc, layout.gpus, wl, assume, prices, w, profile)
        t1 = tier1_cost(
            layout.gpus,
            prices.usd_per_gpu_hour,
            wl.hours_per_day,
            wl.days_per_month,
            w.checkpoint_bytes,
            assume.download_gb_s,
            speed.tokens_per_s,
            wl.utilisation,
        )

    fit = tier2_fit(
        model,
        acc,
        wl.context_tokens,
        wl.concurrency,
        wl.kv_dtype,
        None,
        assume.runtime_overhead_gb,
        assume.ram_bandwidth_gb_s,
    )
    others = tuple(
        tier2_fit(
            m, acc, wl.context_tokens, wl.concurrency, wl.kv_dtype, None,
            assume.runtime_overhead_gb, assume.ram_bandwidth_gb_s,
        )
        for m in tier2_models
    )  # fmt: skip
    pick = one_card_pick(acc.memory_gb)
    t2 = Tier2Result(acc.name, fit.fits, fit, others, pick)

    t3 = api_monthly_cost(
        wl.monthly_input_tokens, wl.cached_input_share, wl.monthly_output_tokens, prices
    )
    be = None
    if t1 is not None and t1.usd_per_month is not None and prices.api_usd_per_m_output is not None:
        per_m = prices.api_usd_per_m_output if t3 is None else t3.usd_per_m_output_effective
        be = break_even(
            t1.usd_per_month,
            per_m,
            prices.gateway_usd_per_month,
            t1.output_tokens_per_month,
            wl.days_per_month,
        )

    largest = max((*catalog, acc), key=lambda a: a.memory_gb)
    verdicts = Verdicts(
        single_gpu_verdict(model.name, w, largest.name, largest.memory_gb),
        tier1_verdict(scenario, layout, t1, speed, w),
        tier2_verdict(scenario, fit, pick),
        tier3_verdict(t3),
        break_even_verdict(be, layout),
    )
    return ScenarioResult(
        model.name, acc.name, w.weights_bytes, w, kv.known, kv.kv_bytes_per_token,
        kv.state_bytes_per_sequence, kv.kv_bytes_per_user, kv, own_floor.min_gpus,
        own_floor.min_gpus_idealised, layout, speed,
        None if speed is None else speed.tokens_per_s,
        None if t1 is None else t1.tokens_per_s_per_usd_per_hour,
        t1, None if t1 is None else t1.usd_per_month, t2, t3,
        None if t3 is None else t3.usd_per_month, be,
        None if be is None else be.output_tokens_per_month, floor, verdicts,
    )  # fmt: skip


__all__ = ["FloorRow", "ScenarioResult", "SizingError", "Tier2Result", "evaluate", "floor_table"]
