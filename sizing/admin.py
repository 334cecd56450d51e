from django.contrib import admin

from sizing.models import Accelerator, AttentionGroup, LLMModel, TensorGroup, WeightFormat
from sizing.selectors import catalog_changed


class CatalogAdminMixin:
    """Size with the edited values at once in this process (see sizing.selectors)."""

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        catalog_changed()

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        catalog_changed()

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        catalog_changed()


@admin.register(WeightFormat)
class WeightFormatAdmin(CatalogAdminMixin, admin.ModelAdmin):
    list_display = ["name", "bits_per_weight", "description"]
    search_fields = ["name"]


class AttentionGroupInline(admin.TabularInline):
    model = AttentionGroup
    extra = 0
    fields = [
        "position", "kind", "layers", "kv_heads", "head_dim", "window_tokens", "kv_lora_rank",
        "qk_rope_head_dim", "state_heads", "state_key_dim", "state_value_dim",
        "conv_state_elements", "state_bytes_per_element", "note",
    ]  # fmt: skip


class TensorGroupInline(admin.TabularInline):
    model = TensorGroup
    extra = 0


@admin.register(LLMModel)
class LLMModelAdmin(CatalogAdminMixin, admin.ModelAdmin):
    list_display = ["name", "vendor", "total_params", "active_params", "weight_format", "updated"]
    list_filter = ["vendor", "weight_format"]
    search_fields = ["name", "slug", "vendor", "architecture"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [AttentionGroupInline, TensorGroupInline]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "name", "slug", "vendor", "release_date", "licence", "architecture", "repo_id",
                ]
            },
        ),
        (
            "Size",
            {
                "fields": [
                    "total_params", "active_params", "layers", "hidden_size", "vocab_size",
                    "attention_heads", "max_context_tokens", "weight_format", "kv_dtype",
                    "checkpoint_bytes",
                ]
            },
        ),
        (
            "Experts",
            {
                "fields": [
                    "routed_experts", "active_experts", "shared_experts", "params_per_expert",
                    "moe_layers",
                ]
            },
        ),
        ("Source", {"fields": ["source_url", "source_note", "figures_as_of", "notes"]}),
    ]  # fmt: skip


@admin.register(Accelerator)
class AcceleratorAdmin(CatalogAdminMixin, admin.ModelAdmin):
    list_display = ["name", "vendor", "kind", "memory_gb", "bandwidth_tb_s", "figures_as_of"]
    list_filter = ["vendor", "kind"]
    search_fields = ["name", "slug", "vendor"]
    prepopulated_fields = {"slug": ["name"]}
