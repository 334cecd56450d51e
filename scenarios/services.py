"""Scenario computations and writes, shared by the pages and the JSON API.

The flow: `scenario_inputs_from_dict` validates the builder's fields into `ScenarioInputs`;
`scenario_evaluate` runs the engine on them and returns the result with a snapshot of every
catalog value and price it used; `scenario_create` / `scenario_update` store both. A saved
scenario is re-evaluated from its snapshot (`scenario_reevaluate`), never from today's catalog
or prices, so an old plan gives the same numbers.

Permissions are the callers' job: load the row with `selectors.scenario_for_user` first.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from pricing.models import ApiPrice, GpuPrice
from probes.selectors import Calibration, calibrated_assumptions, calibration_of
from scenarios.forms import ASSUMPTION_FIELDS, BuilderForm, builder_initial, tags_parse
from scenarios.models import PRIVATE, TEAM, VISIBILITY_VALUES, Scenario
from sizing import selectors as catalog
from sizing.engine.evaluate import ScenarioResult, evaluate
from sizing.engine.specs import (
    AcceleratorSpec,
    Assumptions,
    AttentionGroup,
    ExpertSpec,
    ModelSpec,
    Prices,
    TensorGroup,
    Workload,
)
from sizing.engine.specs import Scenario as ScenarioSpec
from sizing.models import Accelerator, LLMModel
from teams.models import Membership

SNAPSHOT_VERSION = 1
META_FIELDS = ("name", "notes", "tags", "visibility", "team")


@dataclass(frozen=True)
class ScenarioInputs:
    """Validated builder inputs: the catalog rows picked and the engine's input values."""

    llm: LLMModel
    accelerator: Accelerator
    gpu_price: GpuPrice | None
    api_price: ApiPrice | None
    prices: Prices
    workload: Workload
    assumptions: Assumptions
    raw: dict[str, Any]  # JSON-able field values (slugs, ids, numbers), to reopen the builder
    calibration: Calibration | None = None  # a measured endpoint's speed factor, applied


def scenario_inputs_from_dict(data: Mapping[str, Any], *, user=None) -> ScenarioInputs:
    """Validate builder fields given by name (strings or numbers). A missing field takes the
    builder's default (the article's K3 scenario); None or "" leaves a typed price out.

    Raises ValidationError whose `message_dict` maps field names to messages.
    """
    given = {k: "" if v is None else str(v) for k, v in data.items()}
    form = BuilderForm(data={**builder_initial(), **given}, user=user)
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    return scenario_inputs_from_form(form)


def scenario_inputs_from_form(form: BuilderForm) -> ScenarioInputs:
    """The inputs of a valid BuilderForm."""
    cd = form.cleaned_data
    gpu_price, api_price = cd.get("gpu_price"), cd.get("api_price")
    rate = cd.get("usd_per_gpu_hour")
    if gpu_price is not None:
        rate = float(gpu_price.usd_per_gpu_hour)
    hit, miss = cd.get("api_usd_per_m_input_hit"), cd.get("api_usd_per_m_input_miss")
    output = cd.get("api_usd_per_m_output")
    if api_price is not None:
        miss = float(api_price.usd_per_m_input_cache_miss)
        output = float(api_price.usd_per_m_output)
        # A provider without a cache discount bills cached input at the miss rate.
        hit = miss
        if api_price.usd_per_m_input_cache_hit is not None:
            hit = float(api_price.usd_per_m_input_cache_hit)
    dates = [p.effective_date for p in (gpu_price, api_price) if p is not None]
    prices = Prices(
        usd_per_gpu_hour=rate,
        api_usd_per_m_input_hit=hit,
        api_usd_per_m_input_miss=miss,
        api_usd_per_m_output=output,
        gateway_usd_per_month=cd["gateway_usd_per_month"],
        source=_price_source(gpu_price, api_price),
        as_of=(min(dates) if dates else timezone.localdate()).isoformat(),
    )
    workload = Workload(
        context_tokens=cd["context_tokens"],
        concurrency=cd["concurrency"],
        kv_dtype=cd.get("kv_dtype") or None,
        hours_per_day=cd["hours_per_day"],
        utilisation=cd["utilisation_pct"] / 100,
        monthly_input_tokens=cd["monthly_input_m_tokens"] * 1e6,
        cached_input_share=cd["cached_input_pct"] / 100,
        monthly_output_tokens=cd["monthly_output_m_tokens"] * 1e6,
        prompt_tokens=cd["prompt_tokens"],
    )
    assumptions = Assumptions(**{name: cd[name] for name in ASSUMPTION_FIELDS})
    calibration = None
    if cd.get("calibration") is not None:
        calibration = calibration_of(cd["calibration"])
        assumptions = calibrated_assumptions(assumptions, calibration.factor)
    raw: dict[str, Any] = {}
    for name in form.fields:
        value = cd.get(name)
        if name in ("llm", "accelerator"):
            value = value.slug
        elif name in ("gpu_price", "api_price", "calibration"):
            value = None if value is None else value.pk
        raw[name] = value
    return ScenarioInputs(
        cd["llm"],
        cd["accelerator"],
        gpu_price,
        api_price,
        prices,
        workload,
        assumptions,
        raw,
        calibration,
    )


def _price_source(gpu: GpuPrice | None, api: ApiPrice | None) -> str:
    gpu_part = f"{gpu.provider.name} {gpu.get_kind_display()}" if gpu else "typed GPU-hour rate"
    api_part = f"{api.provider.name} {api.model_id}" if api else "typed API prices"
    return f"{gpu_part}; {api_part}"


def _gpu_price_meta(row: GpuPrice | None) -> dict | None:
    if row is None:
        return None
    return {
        "id": row.pk,
        "provider": row.provider.name,
        "provider_id": row.provider_id,
        "accelerator_id": row.accelerator_id,
        "kind": row.kind,
        "term_months": row.term_months,
        "region": row.region,
        "zone": row.zone,
        "gpu_count": row.gpu_count,
        "offer": row.offer,
        "usd_per_gpu_hour": float(row.usd_per_gpu_hour),
        "effective_date": row.effective_date.isoformat(),
        "source_url": row.source_url,
    }


def _api_price_meta(row: ApiPrice | None) -> dict | None:
    if row is None:
        return None
    hit = row.usd_per_m_input_cache_hit
    return {
        "id": row.pk,
        "provider": row.provider.name,
        "provider_id": row.provider_id,
        "model_id": row.model_id,
        "usd_per_m_input_cache_hit": None if hit is None else float(hit),
        "usd_per_m_input_cache_miss": float(row.usd_per_m_input_cache_miss),
        "usd_per_m_output": float(row.usd_per_m_output),
        "effective_date": row.effective_date.isoformat(),
        "source_url": row.source_url,
    }


def _calibration_meta(calibration: Calibration | None) -> dict | None:
    if calibration is None:
        return None
    return {
        "label": calibration.label,
        "factor": calibration.factor,
        "measured_tokens_per_s": calibration.measured_tokens_per_s,
        "estimated_tokens_per_s": calibration.estimated_tokens_per_s,
        "endpoint_id": calibration.endpoint_id,
        "result_id": calibration.result_id,
        "basis": calibration.basis,
    }


def _catalog_meta(row: LLMModel | Accelerator) -> dict:
    as_of = row.figures_as_of
    return {
        "id": row.pk,
        "slug": row.slug,
        "figures_as_of": as_of.isoformat() if as_of else None,
        "source_url": row.source_url,
    }


def catalog_accelerator_specs() -> list[AcceleratorSpec]:
    """Every catalog accelerator, for the weights-only floor table (sizing's cached specs)."""
    return list(catalog.catalog_specs().accelerators.values())


def catalog_model_specs(*, exclude_slug: str = "") -> list[ModelSpec]:
    """The catalog's models as engine specs, for tier 2's "what fits this card" (cached)."""
    return [m for slug, m in catalog.catalog_specs().models.items() if slug != exclude_slug]


def _model_spec(llm: LLMModel) -> ModelSpec:
    cached = catalog.catalog_specs().models.get(llm.slug)
    return cached if cached is not None else catalog.model_spec(catalog.llm_models().get(pk=llm.pk))


def _accelerator_spec(acc: Accelerator) -> AcceleratorSpec:
    cached = catalog.catalog_specs().accelerators.get(acc.slug)
    return cached if cached is not None else catalog.accelerator_spec(acc)


def scenario_evaluate(
    *,
    inputs: ScenarioInputs,
    accelerator_specs: Sequence[AcceleratorSpec] | None = None,
    tier2_models: Sequence[ModelSpec] | None = None,
) -> tuple[ScenarioResult, dict]:
    """Run the engine on validated inputs: (result, snapshot of what it used).

    The floor table covers every catalog accelerator and tier 2 lists every other catalog model
    unless given. Raises the engine's SizingError (its `field` names the engine input).
    """
    if accelerator_specs is None:
        accelerator_specs = catalog_accelerator_specs()
    if tier2_models is None:
        tier2_models = catalog_model_specs(exclude_slug=inputs.llm.slug)
    spec = ScenarioSpec(
        model=_model_spec(inputs.llm),
        accelerator=_accelerator_spec(inputs.accelerator),
        workload=inputs.workload,
        prices=inputs.prices,
        assumptions=inputs.assumptions,
    )
    result = evaluate(spec, accelerator_specs, tier2_models)
    snapshot = {
        "version": SNAPSHOT_VERSION,
        "computed_at": timezone.now().isoformat(timespec="seconds"),
        "model": asdict(spec.model),
        "model_meta": _catalog_meta(inputs.llm),
        "accelerator": asdict(spec.accelerator),
        "accelerator_meta": _catalog_meta(inputs.accelerator),
        "workload": asdict(spec.workload),
        "assumptions": asdict(spec.assumptions),
        "prices": asdict(spec.prices),
        "gpu_price": _gpu_price_meta(inputs.gpu_price),
        "api_price": _api_price_meta(inputs.api_price),
        "calibration": _calibration_meta(inputs.calibration),
    }
    return result, snapshot


def _build(cls, data: Mapping[str, Any]):
    # Keep only the fields the engine still has, so an older snapshot still loads.
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def model_spec_from_dict(data: Mapping[str, Any]) -> ModelSpec:
    d = dict(data)
    d["attention"] = tuple(_build(AttentionGroup, g) for g in d.get("attention") or ())
    d["tensor_groups"] = tuple(_build(TensorGroup, t) for t in d.get("tensor_groups") or ())
    if d.get("experts"):
        d["experts"] = _build(ExpertSpec, d["experts"])
    return _build(ModelSpec, d)


def scenario_spec_from_snapshot(snapshot: Mapping[str, Any]) -> ScenarioSpec:
    """The engine scenario a snapshot records."""
    return ScenarioSpec(
        model=model_spec_from_dict(snapshot["model"]),
        accelerator=_build(AcceleratorSpec, snapshot["accelerator"]),
        workload=_build(Workload, snapshot["workload"]),
        prices=_build(Prices, snapshot["prices"]),
        assumptions=_build(Assumptions, snapshot["assumptions"]),
    )


def scenario_reevaluate(
    *,
    scenario: Scenario,
    accelerator_specs: Sequence[AcceleratorSpec] = (),
    tier2_models: Sequence[ModelSpec] = (),
) -> ScenarioResult:
    """A saved scenario's result, from its snapshot: the same numbers whatever changed since.

    The floor table and tier 2's list use the accelerators and models passed in (today's
    catalog on the pages); the scenario's own model, card and prices come from the snapshot.
    """
    return evaluate(scenario_spec_from_snapshot(scenario.snapshot), accelerator_specs, tier2_models)


def _key_figures(result: ScenarioResult) -> dict[str, Any]:
    return {
        "gpus": result.layout.gpus if result.layout.fits else None,
        "weights_bytes": result.weights_bytes,
        "tier1_usd_per_month": result.tier1_usd_per_month,
        "tier3_usd_per_month": result.tier3_usd_per_month,
        "break_even_output_tokens_per_month": result.break_even_output_tokens_per_month,
        "tokens_per_s": result.decode_tokens_per_s,
        "tokens_per_s_per_usd_per_hour": result.tokens_per_s_per_usd_per_hour,
    }


def _computed_fields(inputs: ScenarioInputs, result: ScenarioResult, snapshot: dict) -> dict:
    return {
        "llm": inputs.llm,
        "model_name": inputs.llm.name,
        "accelerator": inputs.accelerator,
        "accelerator_name": inputs.accelerator.name,
        "inputs": inputs.raw,
        "snapshot": snapshot,
        "prices_as_of": dt.date.fromisoformat(inputs.prices.as_of),
        **_key_figures(result),
    }


def _check_sharing(owner, visibility: str, team) -> None:
    if visibility not in VISIBILITY_VALUES:
        raise ValidationError({"visibility": f"Must be one of {', '.join(VISIBILITY_VALUES)}."})
    if visibility == TEAM and team is None:
        raise ValidationError({"team": "Pick the team to share it with."})
    if team is not None and not Membership.objects.filter(team=team, user=owner).exists():
        raise ValidationError({"team": "You can only share with a team you are a member of."})


@transaction.atomic
def scenario_create(
    *,
    owner,
    inputs: ScenarioInputs,
    name: str,
    notes: str = "",
    tags: str | Sequence[str] = "",
    visibility: str = PRIVATE,
    team=None,
) -> Scenario:
    """Evaluate and save a scenario. Raises SizingError or ValidationError (bad team/visibility)."""
    _check_sharing(owner, visibility, team)
    result, snapshot = scenario_evaluate(inputs=inputs)
    scenario = Scenario(
        owner=owner,
        name=name,
        notes=notes,
        tags=_tags(tags),
        visibility=visibility,
        team=team,
        **_computed_fields(inputs, result, snapshot),
    )
    scenario.search_text = search_text(scenario)
    scenario.save()
    return scenario


@transaction.atomic
def scenario_update(
    *, scenario: Scenario, inputs: ScenarioInputs | None = None, **meta: Any
) -> Scenario:
    """Change a scenario's inputs (re-evaluated, new snapshot) and/or its name, notes, tags,
    visibility or team. Raises SizingError or ValidationError."""
    unknown = set(meta) - set(META_FIELDS)
    if unknown:
        raise TypeError(f"scenario_update() got unexpected fields: {', '.join(sorted(unknown))}")
    if "tags" in meta:
        meta["tags"] = _tags(meta["tags"])
    for name, value in meta.items():
        setattr(scenario, name, value)
    _check_sharing(scenario.owner, scenario.visibility, scenario.team)
    if inputs is not None:
        result, snapshot = scenario_evaluate(inputs=inputs)
        for name, value in _computed_fields(inputs, result, snapshot).items():
            setattr(scenario, name, value)
    scenario.search_text = search_text(scenario)
    scenario.save()
    return scenario


@transaction.atomic
def scenario_clone(*, scenario: Scenario, owner) -> Scenario:
    """A private copy for `owner`, with the same inputs, snapshot and figures (not re-priced)."""
    skip = ("id", "owner", "team", "visibility", "name", "created", "updated")
    fields = {
        f.attname: getattr(scenario, f.attname)
        for f in Scenario._meta.concrete_fields
        if f.name not in skip
    }
    name = f"Copy of {scenario.name}"[: Scenario._meta.get_field("name").max_length]
    copy = Scenario(owner=owner, team=None, visibility=PRIVATE, name=name, **fields)
    copy.search_text = search_text(copy)
    copy.save()
    return copy


@transaction.atomic
def scenario_delete(*, scenario: Scenario) -> None:
    scenario.delete()


def search_text(scenario: Scenario) -> str:
    """What the library's search matches: name, model, accelerator and tags, lower case."""
    parts = (scenario.name, scenario.model_name, scenario.accelerator_name, scenario.tags)
    return " ".join(parts).lower()


def _tags(tags: str | Sequence[str]) -> str:
    text = tags if isinstance(tags, str) else " ".join(tags)
    return " ".join(tags_parse(text))
