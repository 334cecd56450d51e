from django import forms
from django.contrib import admin

from probes import services
from probes.models import Endpoint, ProbeResult, StatusEvent


class EndpointAdminForm(forms.ModelForm):
    """The key is write-only here too: a password input never rendered back."""

    api_key = forms.CharField(
        required=False,
        label="API key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted, never shown. Leave empty to keep the current key.",
    )
    clear_key = forms.BooleanField(required=False, label="Remove the stored key")

    class Meta:
        model = Endpoint
        fields = [
            "team", "name", "base_url", "kind", "model_id", "enabled", "llm", "accelerator",
            "gpu_count", "api_price", "key_env_var", "interval_s", "timeout_s",
            "speed_interval_s", "speed_concurrency", "speed_max_tokens",
        ]  # fmt: skip

    def clean(self):
        data = super().clean()
        if data.get("api_key") and data.get("key_env_var"):
            raise forms.ValidationError("Give either a key or a variable name, not both.")
        if data.get("key_env_var"):
            self.instance.key_encrypted = ""
        return data


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    form = EndpointAdminForm
    list_display = ["name", "team", "kind", "model_id", "status", "last_probed_at", "enabled"]
    list_filter = ["status", "kind", "enabled", "team"]
    search_fields = ["name", "base_url", "model_id"]
    readonly_fields = ["key_source", "status", "status_since", "last_probed_at", "last_speed_at"]
    raw_id_fields = ["api_price"]
    fieldsets = [
        (None, {"fields": ["team", "name", "base_url", "kind", "model_id", "enabled"]}),
        ("Runs on", {"fields": ["llm", "accelerator", "gpu_count", "api_price"]}),
        ("Key", {"fields": ["key_source", "api_key", "clear_key", "key_env_var"]}),
        (
            "Schedule",
            {
                "fields": [
                    "interval_s",
                    "timeout_s",
                    "speed_interval_s",
                    "speed_concurrency",
                    "speed_max_tokens",
                ]
            },
        ),  # fmt: skip
        ("State", {"fields": ["status", "status_since", "last_probed_at", "last_speed_at"]}),
    ]

    @admin.display(description="Key")
    def key_source(self, obj: Endpoint) -> str:
        return obj.key_source

    def save_model(self, request, obj, form, change):
        services.endpoint_save(
            endpoint=obj,
            api_key=form.cleaned_data.get("api_key", ""),
            clear_key=form.cleaned_data.get("clear_key", False),
            user=request.user,
        )


class ReadOnlyAdmin(admin.ModelAdmin):
    """History is written by probes only."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ProbeResult)
class ProbeResultAdmin(ReadOnlyAdmin):
    list_display = ["endpoint", "kind", "started_at", "status", "http_status", "latency_ms",
                    "tokens_per_s"]  # fmt: skip
    list_filter = ["kind", "status"]
    date_hierarchy = "started_at"
    list_select_related = ["endpoint"]


@admin.register(StatusEvent)
class StatusEventAdmin(ReadOnlyAdmin):
    list_display = ["endpoint", "created_at", "from_status", "to_status", "webhook_state"]
    list_filter = ["to_status", "webhook_state"]
    list_select_related = ["endpoint"]
