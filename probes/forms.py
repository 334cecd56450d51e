from django import forms

from probes.models import Endpoint


class EndpointForm(forms.ModelForm):
    """Add or edit an endpoint. The key is write-only: it is never rendered back."""

    api_key = forms.CharField(
        required=False,
        strip=True,
        max_length=4000,
        label="API key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted and never shown again. Leave empty to keep the current one.",
    )
    clear_key = forms.BooleanField(required=False, label="Remove the stored key")

    class Meta:
        model = Endpoint
        fields = [
            "team", "name", "base_url", "kind", "model_id", "llm", "accelerator", "gpu_count",
            "api_price", "key_env_var", "interval_s", "timeout_s", "speed_interval_s",
            "speed_concurrency", "speed_max_tokens", "enabled",
        ]  # fmt: skip
        widgets = {"base_url": forms.URLInput(attrs={"placeholder": "http://10.0.0.5:8000"})}

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        # The team picks: only the user's own teams are offered (or accepted).
        self.fields["team"].queryset = user.teams.order_by("name")
        # Current price rows only: a superseded row stays linked to the endpoints that had it.
        prices = self.fields["api_price"].queryset.select_related("provider")
        current = prices.filter(valid_until__isnull=True)
        if self.instance.api_price_id:
            current = current | prices.filter(pk=self.instance.api_price_id)
        self.fields["api_price"].queryset = current.order_by("provider__name", "model_id")
        if self.instance.pk and self.instance.has_stored_key:
            self.fields[
                "api_key"
            ].help_text = "A key is stored (encrypted; not shown). Enter a new one to replace it."
        else:
            del self.fields["clear_key"]

    def clean(self):
        data = super().clean()
        if data.get("api_key") and data.get("key_env_var"):
            raise forms.ValidationError(
                "Give either a key or the name of the variable that holds it, not both."
            )
        if data.get("key_env_var"):
            # The variable replaces a stored key; the check constraint wants one source only.
            self.instance.key_encrypted = ""
        return data
