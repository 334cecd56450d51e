"""Catalog endpoints: models and accelerators (read for anyone, write for staff)."""

from django.db import transaction
from django.db.models import Q
from django.shortcuts import get_object_or_404
from ninja import Router, Status
from ninja.errors import HttpError
from ninja.pagination import LimitOffsetPagination, paginate

from k3planner.api import anyone
from sizing import selectors
from sizing.models import Accelerator, AttentionGroup, LLMModel, TensorGroup
from sizing.schemas import AcceleratorIn, AcceleratorOut, ModelIn, ModelOut
from sizing.services import weight_formats_sync

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
