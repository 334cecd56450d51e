"""One call that returns every figure for a scenario, and the weights-only floor table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .errors import SizingError
from .kv import KVEstimate, estimate_from_profile, kv_profile
from .layout import Layout, _recommend, min_gpus_for_weights
from .specs import AcceleratorSpec, Assumptions, ModelSpec, Prices, Scenario, Workload
from .speed import SpeedEstimate, _speed
from .tiers import (
    BreakEven,
    BreakEvenSeries,
    OneCardPick,
    Tier1Cost,
    Tier2Fit,
    Tier3Cost,
    _tier2_fit,
    api_monthly_cost,
    break_even,
    break_even_series,
    one_card_pick,
    tier1_cost,
    tier2_fit,
)
from .validate import (
    validate_accelerator,
    validate_assumptions,
    validate_model,
    validate_prices,
    validate_workload,
)
from .verdicts import (
    Verdicts,
    break_even_verdict,
    single_gpu_verdict,
    tier1_verdict,
    tier2_verdict,
    tier3_verdict,
)
from .weights import WeightsResult, weights

UNIFIED_MEMORY = "unified"  # AcceleratorSpec.kind of Apple-style machines


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
    catalog = tuple(accelerators)
    try:
        return _floor_table(model, catalog, weight_format)
    except TypeError:
        _validate_catalog(catalog)  # names the unhashable entry
        raise


def _validate_catalog(catalog: Sequence[AcceleratorSpec]) -> None:
    for i, acc in enumerate(catalog):
        validate_accelerator(acc, f"catalog[{i}]")


# Comparing cards passes the same catalog tuple with every scenario; hashing 14 specs costs more
# than the lookup saves, so remember the last few by identity (tuples only: they cannot change).
_FLOOR_BY_ID: dict[tuple[int, int], tuple[ModelSpec, object, tuple[FloorRow, ...]]] = {}
_FLOOR_BY_ID_MAX = 64


def _catalog_floor(model: ModelSpec, catalog: Sequence[AcceleratorSpec]) -> tuple[FloorRow, ...]:
    key = (id(model), id(catalog))
    hit = _FLOOR_BY_ID.get(key)
    if hit is not None and hit[0] is model and hit[1] is catalog:
        return hit[2]
    rows = floor_table(model, catalog)
    if isinstance(catalog, tuple):
        if len(_FLOOR_BY_ID) >= _FLOOR_BY_ID_MAX:
            _FLOOR_BY_ID.clear()
        _FLOOR_BY_ID[key] = (model, catalog, rows)  # holding them keeps their ids unique
    return rows


# The same catalog is priced against many scenarios: build its floor rows once per model.
@lru_cache(maxsize=256)
def _floor_table(
    model: ModelSpec, catalog: tuple[AcceleratorSpec, ...], weight_format: str | None
) -> tuple[FloorRow, ...]:
    _validate_catalog(catalog)
    w, ideal = _weights_pair(model, weight_format)
    return tuple(_floor_row(w, ideal, acc) for acc in catalog)


@lru_cache(maxsize=1024)
def _weights_pair(
    model: ModelSpec, weight_format: str | None = None
) -> tuple[WeightsResult, WeightsResult | None]:
    """The weights, and the idealised ones beside them (MXFP4 -> 4-bit). Validates the model."""
    validate_model(model)
    w = weights(model, weight_format)
    return w, weights(model, w.idealised_format) if w.idealised_format else None


# Everything that depends on the model, the card and the workload's shape but not on prices or
# volumes, so a builder that changes a price or a schedule reuses it.
@lru_cache(maxsize=4096)
def _hardware(
    model: ModelSpec,
    acc: AcceleratorSpec,
    context_tokens: int,
    concurrency: int,
    kv_dtype: str | None,
    prompt_tokens: int,
    assume: Assumptions,
    usd_per_gpu_hour: float | None,
) -> tuple[KVEstimate, FloorRow, Layout, SpeedEstimate | None, Tier2Fit, OneCardPick, str]:
    w, ideal = _weights_pair(model)
    profile = kv_profile(model, kv_dtype)
    kv = estimate_from_profile(profile, context_tokens, concurrency)
    shape = Workload(context_tokens, concurrency, kv_dtype, prompt_tokens=prompt_tokens)
    layout = _recommend(model, acc, shape, assume, w, profile)
    speed = None
    if layout.fits:
        prices = Prices(usd_per_gpu_hour=usd_per_gpu_hour)
        speed = _speed(model, acc, layout.gpus, shape, assume, prices, w, profile)
    fit = _tier2_fit(
        model, acc, context_tokens, concurrency, w, profile, assume.runtime_overhead_gb,
        assume.ram_bandwidth_gb_s,
    )  # fmt: skip
    pick = one_card_pick(acc.memory_gb)
    text = tier2_verdict(model.name, acc.name, fit, pick)
    return kv, _floor_row(w, ideal, acc), layout, speed, fit, pick, text


def evaluate(
    scenario: Scenario,
    catalog: Sequence[AcceleratorSpec] = (),
    tier2_models: Sequence[ModelSpec] = (),
) -> ScenarioResult:
    if not isinstance(scenario, Scenario):
        raise SizingError("scenario", f"must be a Scenario, got {type(scenario).__name__}")
    model, acc, wl = scenario.model, scenario.accelerator, scenario.workload
    prices, assume = scenario.prices, scenario.assumptions
    if not isinstance(model, ModelSpec):
        validate_model(model)
    try:
        w, ideal = _weights_pair(model)
    except TypeError:
        validate_model(model)  # names the unhashable field
        raise
    # _weights_pair validated the model; now the rest of the scenario
    validate_accelerator(acc)
    validate_workload(wl, model)
    validate_assumptions(assume)
    validate_prices(prices)
    for i, m in enumerate(tier2_models):
        validate_model(m, f"tier2_models[{i}]")
    floor = _catalog_floor(model, catalog) if catalog else ()

    kv, own_floor, layout, speed, fit, pick, tier2_text = _hardware(
        model, acc, wl.context_tokens, wl.concurrency, wl.kv_dtype, wl.prompt_tokens, assume,
        prices.usd_per_gpu_hour,
    )  # fmt: skip
    t1 = None
    if speed is not None:
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
    others = tuple(
        tier2_fit(
            m, acc, wl.context_tokens, wl.concurrency, wl.kv_dtype, None,
            assume.runtime_overhead_gb, assume.ram_bandwidth_gb_s,
        )
        for m in tier2_models
    )  # fmt: skip
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

    # "The largest card": a unified-memory machine is a whole computer, not one accelerator.
    cards = [a for a in (*catalog, acc) if a.kind != UNIFIED_MEMORY] or [acc]
    largest = max(cards, key=lambda a: a.memory_gb)
    verdicts = Verdicts(
        single_gpu_verdict(model.name, w, largest.name, largest.memory_gb, acc.name, acc.memory_gb),
        tier1_verdict(scenario, layout, t1, speed, w),
        tier2_text,
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


def break_even_series_for(
    result: ScenarioResult, points: int = 500, max_output_tokens: float | None = None
) -> BreakEvenSeries | None:
    """The break-even chart for an evaluated scenario; None when it has no break-even inputs."""
    be = result.break_even
    if be is None:
        return None
    return break_even_series(
        be.selfhost_usd_per_replica_month,
        be.api_usd_per_m_output,
        be.gateway_usd_per_month,
        be.replica_output_tokens_per_month,
        points,
        max_output_tokens,
    )


__all__ = [
    "FloorRow",
    "ScenarioResult",
    "SizingError",
    "Tier2Result",
    "break_even_series_for",
    "evaluate",
    "floor_table",
]
