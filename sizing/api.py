"""Catalog endpoints: models and accelerators (read for anyone, write for staff)."""

import json
from dataclasses import asdict, replace

from django.db import transaction
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.text import slugify
from ninja import Router, Status
from ninja.errors import AuthenticationError, HttpError
from ninja.pagination import LimitOffsetPagination, paginate

from k3planner.api import anyone
from sizing import selectors
from sizing.engine.evaluate import evaluate, floor_table
from sizing.engine.importers import model_from_hf_config
from sizing.engine.kv import kv_estimate
from sizing.engine.serialize import as_plain
from sizing.engine.specs import (
    AcceleratorSpec,
    Assumptions,
    ExpertSpec,
    ModelSpec,
    Prices,
    Scenario,
    Workload,
)
from sizing.engine.specs import AttentionGroup as GroupSpec
from sizing.engine.specs import TensorGroup as TensorSpec
from sizing.engine.weights import weights
from sizing.models import Accelerator, AttentionGroup, LLMModel, TensorGroup
from sizing.schemas import (
    AcceleratorIn,
    AcceleratorOut,
    AcceleratorSpecIn,
    FloorOut,
    ImportIn,
    ImportOut,
    ModelIn,
    ModelOut,
    ModelSpecIn,
    SizingIn,
    SizingOut,
)
from sizing.services import llm_model_create, weight_formats_sync

router = Router(tags=["catalog"])


def require_staff(request) -> None:
    if not request.user.is_staff:
        raise HttpError(403, "Only staff may change the catalog")


@router.get("/models", response=list[ModelOut], auth=anyone)
@paginate(LimitOffsetPagination)
def list_models(request, q: str = "", vendor: str = "", moe: bool | None = None):
    models = selectors.llm_models()
    if q:
        models = models.filter(Q(name__icontains=q) | Q(slug__icontains=q))
    if vendor:
        models = models.filter(vendor__iexact=vendor)
    if moe is not None:
        models = models.filter(routed_experts__isnull=not moe)
    return models


# Declared before /models/{slug}: Django tries the URL patterns in order.
@router.post("/models/import", response=ImportOut, auth=anyone, tags=["catalog"])
def import_model(request, payload: ImportIn, save: bool = False):
    """A Hugging Face config.json in, the spec the engine would use out; ?save=true stores it."""
    if save:
        if not request.user.is_authenticated:
            raise AuthenticationError(401, "Saving an import needs a token: 'Bearer <token>'")
        require_staff(request)
    spec = model_from_hf_config(
        payload.config, name=payload.name, weight_format=payload.weight_format
    )
    kv_dtype = payload.kv_dtype or spec.kv_dtype
    spec = replace(spec, kv_dtype=kv_dtype)
    w = weights(spec)
    kv = kv_estimate(spec, Workload(context_tokens=1, kv_dtype=kv_dtype))
    saved_slug = None
    if save:
        saved_slug = payload.slug or slugify(payload.name)
        if LLMModel.objects.filter(slug=saved_slug).exists():
            raise HttpError(409, f"slug: a model {saved_slug!r} already exists")
        architecture = (payload.config.get("architectures") or [""])[0]
        llm_model_create(
            spec=spec,
            slug=saved_slug,
            meta={"architecture": architecture, "source_note": "Imported from config.json"},
        )
    return {
        "name": spec.name,
        "architecture": (payload.config.get("architectures") or [""])[0],
        "total_params": spec.total_params,
        "active_params": spec.active_params,
        "weights_bytes": w.weights_bytes,
        "kv_bytes_per_token": kv.kv_bytes_per_token,
        "state_bytes_per_sequence": kv.state_bytes_per_sequence,
        "kv_dtype": kv_dtype,
        "weight_format": spec.weight_format,
        "tensor_groups": [asdict(t) for t in spec.tensor_groups],
        "attention_groups": [asdict(g) for g in spec.attention],
        "experts": asdict(spec.experts) if spec.experts else None,
        "layers": spec.layers,
        "max_context_tokens": spec.max_context_tokens,
        "saved_slug": saved_slug,
    }


@router.get("/models/{slug}", response=ModelOut, auth=anyone)
def get_model(request, slug: str):
    return get_object_or_404(selectors.llm_models(), slug=slug)


@transaction.atomic
def _save_model(payload: ModelIn, llm: LLMModel | None) -> LLMModel:
    formats = weight_formats_sync()
    data = payload.dict(exclude={"attention_groups", "tensor_groups"})
    names = {data["weight_format"], *(t.weight_format for t in payload.tensor_groups)}
    for name in names:
        if name not in formats:
            raise HttpError(422, f"weight_format: unknown format {name!r}")
    data["weight_format"] = formats[data["weight_format"]]
    llm = llm or LLMModel()
    for key, value in data.items():
        setattr(llm, key, value)
    llm.full_clean(validate_unique=True)
    llm.save()
    llm.attention_groups.all().delete()
    llm.tensor_groups.all().delete()
    for position, g in enumerate(payload.attention_groups):
        group = AttentionGroup(llm=llm, position=position, **g.dict())
        group.full_clean()
        group.save()
    for t in payload.tensor_groups:
        TensorGroup.objects.create(
            llm=llm, name=t.name, params=t.params, weight_format=formats[t.weight_format]
        )
    transaction.on_commit(selectors.catalog_changed)
    return selectors.llm_models().get(pk=llm.pk)


@router.post("/models", response={201: ModelOut})
def create_model(request, payload: ModelIn):
    require_staff(request)
    if LLMModel.objects.filter(slug=payload.slug).exists():
        raise HttpError(409, f"slug: a model {payload.slug!r} already exists")
    return Status(201, _save_model(payload, None))


@router.put("/models/{slug}", response=ModelOut)
def update_model(request, slug: str, payload: ModelIn):
    require_staff(request)
    llm = get_object_or_404(LLMModel, slug=slug)
    return _save_model(payload, llm)


@router.get("/accelerators", response=list[AcceleratorOut], auth=anyone)
@paginate(LimitOffsetPagination)
def list_accelerators(
    request, q: str = "", vendor: str = "", kind: str = "", min_memory_gb: float = 0
):
    accs = selectors.accelerators()
    if q:
        accs = accs.filter(Q(name__icontains=q) | Q(slug__icontains=q))
    if vendor:
        accs = accs.filter(vendor__iexact=vendor)
    if kind:
        accs = accs.filter(kind=kind)
    if min_memory_gb:
        accs = accs.filter(memory_gb__gte=min_memory_gb)
    return accs


@router.get("/accelerators/{slug}", response=AcceleratorOut, auth=anyone)
def get_accelerator(request, slug: str):
    return get_object_or_404(selectors.accelerators(), slug=slug)


def _save_accelerator(payload: AcceleratorIn, acc: Accelerator) -> Accelerator:
    for key, value in payload.dict().items():
        setattr(acc, key, value)
    acc.full_clean()
    acc.save()
    selectors.catalog_changed()
    return acc


@router.post("/accelerators", response={201: AcceleratorOut})
def create_accelerator(request, payload: AcceleratorIn):
    require_staff(request)
    if Accelerator.objects.filter(slug=payload.slug).exists():
        raise HttpError(409, f"slug: an accelerator {payload.slug!r} already exists")
    return Status(201, _save_accelerator(payload, Accelerator()))


@router.put("/accelerators/{slug}", response=AcceleratorOut)
def update_accelerator(request, slug: str, payload: AcceleratorIn):
    require_staff(request)
    return _save_accelerator(payload, get_object_or_404(Accelerator, slug=slug))


# --- sizing and import -------------------------------------------------------------------------


def _model_spec(value: str | ModelSpecIn, weight_format: str | None) -> ModelSpec:
    if isinstance(value, str):
        spec = selectors.catalog_specs().models.get(value)
        if spec is None:
            raise Http404(f"No model {value!r} in the catalog")
    else:
        data = value.dict()
        experts = data.pop("experts")
        spec = ModelSpec(
            **{k: v for k, v in data.items() if k not in ("attention", "tensor_groups")},
            attention=tuple(GroupSpec(**g) for g in data["attention"]),
            tensor_groups=tuple(TensorSpec(**t) for t in data["tensor_groups"]),
            experts=ExpertSpec(**experts) if experts else None,
        )
    if weight_format:
        # The whole model in one format: the article's idealised rows, or a re-quantisation.
        spec = replace(spec, weight_format=weight_format, tensor_groups=())
    return spec


def _accelerator_spec(value: str | AcceleratorSpecIn) -> AcceleratorSpec:
    if isinstance(value, str):
        spec = selectors.catalog_specs().accelerators.get(value)
        if spec is None:
            raise Http404(f"No accelerator {value!r} in the catalog")
        return spec
    return AcceleratorSpec(**value.dict())


def prices_from_input(p) -> Prices:
    """Typed prices; dated price rows by id are resolved once the pricing app is wired in."""
    if p.gpu_price_id or p.api_price_id:
        raise HttpError(422, "prices: price ids are not supported yet; type the rates")
    return Prices(
        usd_per_gpu_hour=p.usd_per_gpu_hour,
        api_usd_per_m_input_hit=p.api_usd_per_m_input_hit,
        api_usd_per_m_input_miss=p.api_usd_per_m_input_miss,
        api_usd_per_m_output=p.api_usd_per_m_output,
        gateway_usd_per_month=p.gateway_usd_per_month,
    )


def sizing_response(result, prices: Prices) -> dict:
    detail = as_plain(result)
    return {
        "model": result.model_name,
        "accelerator": result.accelerator_name,
        "weights_bytes": result.weights_bytes,
        "kv_known": result.kv_known,
        "kv_bytes_per_token": result.kv_bytes_per_token,
        "state_bytes_per_sequence": result.state_bytes_per_sequence,
        "kv_bytes_per_user": result.kv_bytes_per_user,
        "min_gpus_for_weights": result.min_gpus_for_weights,
        "recommended_gpus": result.layout.gpus if result.layout.fits else None,
        "layout": detail["layout"],
        "decode_tokens_per_s": result.decode_tokens_per_s,
        "tokens_per_s_per_usd_per_hour": result.tokens_per_s_per_usd_per_hour,
        "monthly_cost_usd": {
            "tier1": result.tier1_usd_per_month,
            "tier3": result.tier3_usd_per_month,
        },
        "break_even_output_tokens_per_month": result.break_even_output_tokens_per_month,
        "verdicts": detail["verdicts"],
        "prices_used": as_plain(prices),
        "detail": detail,
    }


@router.post("/sizing", response=SizingOut, auth=anyone, tags=["sizing"])
def size(request, payload: SizingIn):
    """Every figure of the engine for one model on one accelerator, with tiers 1-3."""
    model = _model_spec(payload.model, payload.weight_format)
    accelerator = _accelerator_spec(payload.accelerator)
    prices = prices_from_input(payload.prices)
    scenario = Scenario(
        model=model,
        accelerator=accelerator,
        workload=Workload(**payload.workload.dict()),
        prices=prices,
        assumptions=Assumptions(**payload.assumptions.dict()),
    )
    catalog = tuple(selectors.catalog_specs().accelerators.values())
    body = sizing_response(evaluate(scenario, catalog), prices)
    # Built from the engine's own frozen results, the body already has SizingOut's shape
    # (schemathesis checks it against the schema); re-validating it would cost more than the
    # sizing itself.
    return HttpResponse(json.dumps(body), content_type="application/json")


@router.get("/sizing/floor", response=FloorOut, auth=anyone, tags=["sizing"])
def size_floor(request, model: str, weight_format: str | None = None):
    """Weights and the weights-only GPU floor on every catalog accelerator."""
    spec = _model_spec(model, weight_format)
    rows = floor_table(spec, tuple(selectors.catalog_specs().accelerators.values()))
    return {
        "model": spec.name,
        "weight_format": spec.weight_format,
        "weights_bytes": rows[0].weights_bytes if rows else weights(spec).weights_bytes,
        "rows": [{**asdict(r), "accelerator": r.accelerator_name} for r in rows],
    }
