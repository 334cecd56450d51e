"""Scenarios over JSON, with the pages' visibility rules; the logic is the pages' services."""

import datetime as dt

from django.core.exceptions import PermissionDenied, ValidationError
from ninja import Field, Router, Schema, Status
from ninja.errors import HttpError
from ninja.pagination import LimitOffsetPagination, paginate

from scenarios import selectors, services
from scenarios.exports import comparison_rows, scenario_data
from scenarios.models import PRIVATE, Scenario
from sizing.schemas import In
from teams.models import Team

router = Router(tags=["scenarios"])


class ScenarioInputsIn(In):
    """The builder's fields; any left out take the builder's defaults."""

    llm: str = Field(..., description="Catalog model slug, e.g. kimi-k3")
    accelerator: str = Field(..., description="Catalog accelerator slug, e.g. h100-80gb")
    gpu_price: int | None = Field(None, ge=1, description="A dated GPU-hour price id")
    usd_per_gpu_hour: float | None = Field(None, gt=0, le=10_000)
    api_price: int | None = Field(None, ge=1, description="A dated API price id")
    api_usd_per_m_input_hit: float | None = Field(None, ge=0, le=100_000)
    api_usd_per_m_input_miss: float | None = Field(None, ge=0, le=100_000)
    api_usd_per_m_output: float | None = Field(None, ge=0, le=100_000)
    gateway_usd_per_month: float | None = Field(None, ge=0, le=10**7)
    context_tokens: int | None = Field(None, ge=1, le=2**27)
    concurrency: int | None = Field(None, ge=1, le=1_000_000)
    kv_dtype: str | None = Field(None, pattern="^(bf16|fp16|fp8|fp32)?$")
    monthly_input_m_tokens: float | None = Field(None, ge=0, le=10**10)
    cached_input_pct: float | None = Field(None, ge=0, le=100)
    monthly_output_m_tokens: float | None = Field(None, ge=0, le=10**10)
    hours_per_day: float | None = Field(None, ge=0.1, le=24)
    utilisation_pct: float | None = Field(None, ge=1, le=100)
    prompt_tokens: int | None = Field(None, ge=1, le=2**27)
    runtime_overhead_gb: float | None = Field(None, ge=0, le=1000)
    memory_utilisation_cap: float | None = Field(None, ge=0.05, le=1)
    activation_reserve_gb: float | None = Field(None, ge=0, le=1000)
    bandwidth_efficiency: float | None = Field(None, ge=0.01, le=1)
    compute_efficiency: float | None = Field(None, ge=0.01, le=1)
    download_gb_s: float | None = Field(None, ge=0.001, le=10_000)
    ram_bandwidth_gb_s: float | None = Field(None, ge=0.1, le=100_000)
    max_nodes: int | None = Field(None, ge=1, le=100_000)
    calibration: int | None = Field(
        None, ge=1, description="A speed probe result id of your team's endpoint to calibrate from"
    )


class ScenarioIn(In):
    name: str = Field(..., min_length=1, max_length=120)
    notes: str = Field("", max_length=10_000)
    tags: list[str] = Field(default_factory=list, max_length=20)
    visibility: str = Field(PRIVATE, pattern="^(private|team|public)$")
    team: str | None = Field(None, description="Team slug, for team visibility")
    inputs: ScenarioInputsIn


class ScenarioPatchIn(In):
    name: str | None = Field(None, min_length=1, max_length=120)
    notes: str | None = Field(None, max_length=10_000)
    tags: list[str] | None = Field(None, max_length=20)
    visibility: str | None = Field(None, pattern="^(private|team|public)$")
    team: str | None = None
    inputs: ScenarioInputsIn | None = None


class ScenarioSummaryOut(Schema):
    id: int
    name: str
    owner: str = Field(..., alias="owner.username")
    visibility: str
    team: str | None
    tags: list[str] = Field(..., alias="tag_list")
    model_name: str
    accelerator_name: str
    prices_as_of: dt.date | None
    gpus: int | None
    weights_bytes: float | None
    tier1_usd_per_month: float | None
    tier3_usd_per_month: float | None
    break_even_output_tokens_per_month: float | None
    tokens_per_s: float | None
    tokens_per_s_per_usd_per_hour: float | None
    created: dt.datetime
    updated: dt.datetime

    @staticmethod
    def resolve_team(obj):
        return obj.team.slug if obj.team_id else None


class CompareIn(In):
    ids: list[int] = Field(..., min_length=2, max_length=6)


def _team(slug: str | None, user) -> Team | None:
    if not slug:
        return None
    team = Team.objects.filter(slug=slug, memberships__user=user).first()
    if team is None:
        raise ValidationError({"team": f"You are not a member of a team {slug!r}."})
    return team


def _inputs(payload: ScenarioInputsIn, user):
    data = payload.dict(exclude_none=True)
    try:
        return services.scenario_inputs_from_dict(data, user=user)
    except ValidationError as exc:
        # Name the field as the caller sent it: inputs.<field>.
        raise ValidationError({f"inputs.{k}": v for k, v in exc.message_dict.items()}) from None


def _editable(request, scenario_id: int) -> Scenario:
    try:
        return selectors.scenario_for_user(request.user, scenario_id, for_edit=True)
    except PermissionDenied as exc:
        raise HttpError(403, str(exc)) from None


def _detail(scenario: Scenario) -> dict:
    result = services.scenario_reevaluate(scenario=scenario)
    return {**scenario_data(scenario, result), "url": f"/scenarios/{scenario.pk}/"}


@router.get("/scenarios", response=list[ScenarioSummaryOut])
@paginate(LimitOffsetPagination)
def list_scenarios(
    request, q: str = "", model: str = "", accelerator: str = "", tag: str = "", mine: bool = False
):
    return selectors.scenarios_search(
        request.user, q=q, model=model, accelerator=accelerator, tag=tag, mine=mine
    )


@router.post("/scenarios", response={201: dict})
def create_scenario(request, payload: ScenarioIn):
    """Evaluate and save a scenario; returns it with its figures, inputs and snapshot."""
    scenario = services.scenario_create(
        owner=request.user,
        inputs=_inputs(payload.inputs, request.user),
        name=payload.name,
        notes=payload.notes,
        tags=payload.tags,
        visibility=payload.visibility,
        team=_team(payload.team, request.user),
    )
    return Status(201, _detail(scenario))


@router.get("/scenarios/{int:scenario_id}", response=dict)
def get_scenario(request, scenario_id: int):
    return _detail(selectors.scenario_for_user(request.user, scenario_id))


@router.patch("/scenarios/{int:scenario_id}", response=dict)
def update_scenario(request, scenario_id: int, payload: ScenarioPatchIn):
    scenario = _editable(request, scenario_id)
    meta = payload.dict(exclude_unset=True, exclude={"inputs"})
    if "team" in meta:
        meta["team"] = _team(meta["team"], request.user)
    inputs = _inputs(payload.inputs, request.user) if payload.inputs is not None else None
    scenario = services.scenario_update(scenario=scenario, inputs=inputs, **meta)
    return _detail(scenario)


@router.delete("/scenarios/{int:scenario_id}", response={204: None})
def delete_scenario(request, scenario_id: int):
    services.scenario_delete(scenario=_editable(request, scenario_id))
    return Status(204, None)


@router.post("/scenarios/{int:scenario_id}/clone", response={201: dict})
def clone_scenario(request, scenario_id: int):
    """A private copy for the caller of any scenario they may see."""
    original = selectors.scenario_for_user(request.user, scenario_id)
    return Status(201, _detail(services.scenario_clone(scenario=original, owner=request.user)))


@router.post("/scenarios/compare", response=dict)
def compare_scenarios(request, payload: CompareIn):
    """2 to 6 visible scenarios side by side; `best` marks the best value of each figure."""
    scenarios = selectors.scenarios_compare(request.user, payload.ids)
    results = [services.scenario_reevaluate(scenario=s) for s in scenarios]
    rows = comparison_rows(results)
    return {
        "scenarios": [
            {"id": s.pk, "name": s.name, "model": s.model_name, "accelerator": s.accelerator_name}
            for s in scenarios
        ],
        "rows": [
            {
                "figure": row.figure.key,
                "label": row.figure.label,
                "unit": row.figure.unit,
                "values": [c.value for c in row.cells],
                "text": [c.text for c in row.cells],
                "best": [c.best for c in row.cells],
            }
            for row in rows
        ],
    }
