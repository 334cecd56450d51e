"""Catalog queries, and the edge where ORM rows become the engine's plain specs."""

import time
from dataclasses import dataclass, fields

from django.conf import settings
from django.db.models import Prefetch, QuerySet

from sizing.engine.specs import AcceleratorSpec, ExpertSpec, ModelSpec
from sizing.engine.specs import AttentionGroup as GroupSpec
from sizing.engine.specs import TensorGroup as TensorSpec
from sizing.models import Accelerator, AttentionGroup, LLMModel, TensorGroup

# The attention-group columns and the engine's AttentionGroup fields are the same names.
GROUP_FIELDS = tuple(f.name for f in fields(GroupSpec))


def llm_models() -> QuerySet[LLMModel]:
    """Models with everything `model_spec` reads, in three queries whatever their number."""
    return LLMModel.objects.select_related("weight_format").prefetch_related(
        Prefetch("attention_groups", queryset=AttentionGroup.objects.order_by("position", "id")),
        Prefetch("tensor_groups", queryset=TensorGroup.objects.select_related("weight_format")),
    )


def accelerators() -> QuerySet[Accelerator]:
    return Accelerator.objects.all()


def model_spec(llm: LLMModel) -> ModelSpec:
    experts = None
    if llm.routed_experts:
        experts = ExpertSpec(
            routed=llm.routed_experts,
            active=llm.active_experts or 0,
            shared=llm.shared_experts or 0,
            params_per_expert=llm.params_per_expert,
            moe_layers=llm.moe_layers,
        )
    return ModelSpec(
        name=llm.name,
        slug=llm.slug,
        repo_id=llm.repo_id,
        total_params=llm.total_params or 0,
        active_params=llm.active_params,
        layers=llm.layers,
        attention=tuple(
            GroupSpec(**{name: getattr(g, name) for name in GROUP_FIELDS})
            for g in llm.attention_groups.all()
        ),
        experts=experts,
        tensor_groups=tuple(
            TensorSpec(name=t.name, params=t.params, weight_format=t.weight_format.name)
            for t in llm.tensor_groups.all()
        ),
        weight_format=llm.weight_format.name,
        attention_heads=llm.attention_heads,
        hidden_size=llm.hidden_size,
        vocab_size=llm.vocab_size,
        max_context_tokens=llm.max_context_tokens,
        checkpoint_bytes=llm.checkpoint_bytes,
        kv_dtype=llm.kv_dtype,
    )


def accelerator_spec(acc: Accelerator) -> AcceleratorSpec:
    return AcceleratorSpec(
        name=acc.name,
        slug=acc.slug,
        kind=acc.kind,
        memory_gb=acc.memory_gb,
        bandwidth_tb_s=acc.bandwidth_tb_s,
        bf16_tflops=acc.bf16_tflops,
        fp8_tflops=acc.fp8_tflops,
        fp4_tflops=acc.fp4_tflops,
        interconnect_gb_s=acc.interconnect_gb_s,
        gpus_per_node=acc.gpus_per_node,
        power_w=acc.power_w,
    )


# --- the catalog as engine specs, cached in-process -----------------------------------------
# Sizing calls read the whole catalog; rebuilding it from five queries each time costs more than
# the engine itself. Writes through our services and the admin clear the cache at once in their
# own process; other processes see a change within CATALOG_CACHE_SECONDS.


@dataclass(frozen=True)
class CatalogSpecs:
    models: dict[str, ModelSpec]  # by slug
    accelerators: dict[str, AcceleratorSpec]  # by slug, in catalog order


_catalog_cache: dict[str, object] = {"at": 0.0, "specs": None}


def catalog_specs() -> CatalogSpecs:
    now = time.monotonic()
    specs = _catalog_cache["specs"]
    if specs is None or now - float(_catalog_cache["at"]) > settings.CATALOG_CACHE_SECONDS:
        specs = CatalogSpecs(
            models={m.slug: model_spec(m) for m in llm_models()},
            accelerators={a.slug: accelerator_spec(a) for a in accelerators()},
        )
        _catalog_cache.update(at=now, specs=specs)
    assert isinstance(specs, CatalogSpecs)
    return specs


def catalog_changed() -> None:
    """Call after writing the catalog, so this process sizes with the new values at once."""
    _catalog_cache.update(at=0.0, specs=None)
