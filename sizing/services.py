"""Catalog writes that span several rows."""

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import transaction

from sizing.engine import formats
from sizing.engine.errors import SizingError
from sizing.engine.importers import model_from_hf_config
from sizing.engine.specs import AttentionGroup as GroupSpec
from sizing.engine.specs import ExpertSpec, ModelSpec
from sizing.models import Accelerator, AttentionGroup, LLMModel, TensorGroup, WeightFormat
from sizing.selectors import GROUP_FIELDS, catalog_changed

CATALOG_DIR = Path(__file__).resolve().parent / "catalog"


@dataclass
class LoadReport:
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # already present: left as staff edited them
    failed: list[str] = field(default_factory=list)


def weight_formats_sync() -> dict[str, WeightFormat]:
    """Make sure every engine format has a row; existing rows are left as they are."""
    existing = {wf.name: wf for wf in WeightFormat.objects.all()}
    for name, wf in formats.WEIGHT_FORMATS.items():
        if name not in existing:
            existing[name] = WeightFormat.objects.create(
                name=name, bits_per_weight=wf.bits_per_weight, description=wf.description
            )
    return existing


def _date(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


@transaction.atomic
def llm_model_create(*, spec: ModelSpec, slug: str, meta: dict | None = None) -> LLMModel:
    """Store an engine ModelSpec (from an import or the seed) as a catalog model."""
    meta = meta or {}
    wfs = weight_formats_sync()
    for name in {spec.weight_format, *(t.weight_format for t in spec.tensor_groups)}:
        if name not in wfs:
            raise SizingError("weight_format", f"unknown weight format {name!r}")
    experts = spec.experts
    llm = LLMModel(
        name=meta.get("name") or spec.name,
        slug=slug,
        vendor=meta.get("vendor", ""),
        release_date=_date(meta.get("release_date")),
        licence=meta.get("licence", ""),
        architecture=meta.get("architecture", ""),
        repo_id=meta.get("repo_id", "") or spec.repo_id,
        source_url=meta.get("source_url", ""),
        source_note=meta.get("source_note", ""),
        figures_as_of=_date(meta.get("figures_as_of")),
        notes=meta.get("notes", ""),
        total_params=spec.total_params or None,
        active_params=spec.active_params,
        layers=spec.layers,
        hidden_size=spec.hidden_size,
        vocab_size=spec.vocab_size,
        attention_heads=spec.attention_heads,
        max_context_tokens=spec.max_context_tokens,
        routed_experts=experts.routed if experts else None,
        active_experts=(experts.active or None) if experts else None,
        shared_experts=experts.shared if experts else None,
        params_per_expert=experts.params_per_expert if experts else None,
        moe_layers=experts.moe_layers if experts else None,
        weight_format=wfs[spec.weight_format],
        kv_dtype=spec.kv_dtype,
        checkpoint_bytes=spec.checkpoint_bytes,
    )
    llm.full_clean()
    llm.save()
    for position, g in enumerate(spec.attention):
        group = AttentionGroup(
            llm=llm, position=position, **{name: getattr(g, name) for name in GROUP_FIELDS}
        )
        group.full_clean(exclude=["llm"])
        group.save()
    for t in spec.tensor_groups:
        TensorGroup.objects.create(
            llm=llm, name=t.name, params=t.params, weight_format=wfs[t.weight_format]
        )
    transaction.on_commit(catalog_changed)
    return llm


def _seed_spec(entry: dict) -> ModelSpec:
    """A seed entry is either a shipped config.json to import, or an inline spec (Kimi K3)."""
    if "config" in entry:
        config = json.loads((CATALOG_DIR / "configs" / entry["config"]).read_text())
        return model_from_hf_config(config, name=entry["name"])
    s = entry["spec"]
    experts = None
    if s.get("routed_experts"):
        experts = ExpertSpec(
            routed=s["routed_experts"],
            active=s.get("active_experts") or 0,
            shared=s.get("shared_experts") or 0,
            params_per_expert=s.get("params_per_expert"),
            moe_layers=s.get("moe_layers"),
        )
    return ModelSpec(
        name=entry["name"],
        total_params=s["total_params"],
        active_params=s.get("active_params"),
        layers=s.get("layers"),
        attention=tuple(GroupSpec(**g) for g in s.get("attention", ())),
        experts=experts,
        weight_format=s.get("weight_format", "bf16"),
        max_context_tokens=s.get("max_context_tokens"),
    )


def catalog_load(*, catalog_dir: Path = CATALOG_DIR) -> LoadReport:
    """Load the seed catalog. Safe to run twice: present slugs are kept, never overwritten."""
    report = LoadReport()
    weight_formats_sync()
    present = set(Accelerator.objects.values_list("slug", flat=True))
    for entry in json.loads((catalog_dir / "accelerators.json").read_text()):
        if entry["slug"] in present:
            report.kept.append(entry["slug"])
            continue
        acc = Accelerator(**{**entry, "figures_as_of": _date(entry.get("figures_as_of"))})
        acc.full_clean()
        acc.save()
        report.created.append(entry["slug"])

    present = set(LLMModel.objects.values_list("slug", flat=True))
    for entry in json.loads((catalog_dir / "models.json").read_text()):
        slug = entry["slug"]
        if slug in present:
            report.kept.append(slug)
            continue
        try:
            spec = _seed_spec(entry)
            meta = {k: v for k, v in entry.items() if k not in ("spec", "config")}
            if "config" in entry and not meta.get("architecture"):
                meta["architecture"] = _architecture(entry)
            llm_model_create(spec=spec, slug=slug, meta=meta)
        except (OSError, ValueError, ValidationError) as exc:  # SizingError is a ValueError
            report.failed.append(f"{slug}: {exc}")
            continue
        report.created.append(slug)
    catalog_changed()
    return report


def _architecture(entry: dict) -> str:
    config = json.loads((CATALOG_DIR / "configs" / entry["config"]).read_text())
    return (config.get("architectures") or [""])[0]
