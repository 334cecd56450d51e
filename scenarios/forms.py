"""The builder's fields, and the edge where the engine's SizingError becomes a field error."""

from django import forms

from pricing.models import ApiPrice, GpuPrice
from probes.models import ProbeResult
from probes.selectors import calibration_results
from scenarios.models import PRIVATE, TEAM, Scenario
from sizing.engine.errors import SizingError
from sizing.engine.formats import KV_DTYPE_BYTES
from sizing.engine.specs import Assumptions, Workload
from sizing.models import Accelerator, LLMModel
from teams.models import Team

# The article's scenario (Kimi K3 on H100 80GB at $2.50 a GPU-hour; API $0.30 / $3.00 / $15.00
# per million) is what a new builder opens with.
DEFAULT_LLM = "kimi-k3"
DEFAULT_ACCELERATOR = "h100-80gb"
DEFAULT_USD_PER_GPU_HOUR = 2.50
DEFAULT_API_HIT, DEFAULT_API_MISS, DEFAULT_API_OUTPUT = 0.30, 3.00, 15.00
DEFAULT_CONCURRENCY = 8
# "960 M output tokens a month": what $14,400 buys at $15.00 per million (the article).
DEFAULT_MONTHLY_OUTPUT_M = 960

_W, _A = Workload(), Assumptions()
# Typed prices may stay empty: no price means that tier is shown as not costed.
TYPED_PRICES = frozenset(
    {"usd_per_gpu_hour", "api_usd_per_m_input_hit", "api_usd_per_m_input_miss",
     "api_usd_per_m_output"}
)  # fmt: skip
ASSUMPTION_FIELDS = (
    "runtime_overhead_gb",
    "memory_utilisation_cap",
    "activation_reserve_gb",
    "bandwidth_efficiency",
    "compute_efficiency",
    "download_gb_s",
    "ram_bandwidth_gb_s",
    "max_nodes",
)

# Where an engine field's error shows in the form. Percent and million-token fields take the
# engine's share and token fields; catalog fields point at the model or accelerator picked.
SIZING_FIELDS = {
    "workload.context_tokens": "context_tokens",
    "workload.concurrency": "concurrency",
    "workload.kv_dtype": "kv_dtype",
    "workload.hours_per_day": "hours_per_day",
    "workload.utilisation": "utilisation_pct",
    "workload.monthly_input_tokens": "monthly_input_m_tokens",
    "workload.cached_input_share": "cached_input_pct",
    "workload.monthly_output_tokens": "monthly_output_m_tokens",
    "workload.prompt_tokens": "prompt_tokens",
    "prices.usd_per_gpu_hour": "usd_per_gpu_hour",
    "prices.api_usd_per_m_input_hit": "api_usd_per_m_input_hit",
    "prices.api_usd_per_m_input_miss": "api_usd_per_m_input_miss",
    "prices.api_usd_per_m_output": "api_usd_per_m_output",
    "prices.gateway_usd_per_month": "gateway_usd_per_month",
    **{f"assumptions.{name}": name for name in ASSUMPTION_FIELDS},
}


def form_field_for(error: SizingError) -> str | None:
    """The builder field an engine error belongs to; None for a whole-form error."""
    if error.field in SIZING_FIELDS:
        return SIZING_FIELDS[error.field]
    if error.field.startswith("model"):
        return "llm"
    if error.field.startswith("accelerator"):
        return "accelerator"
    return None


def _number(label, initial=None, *, minimum=0, maximum=None, required=False, step="any", **kw):
    attrs = {"step": step, "inputmode": "decimal"}
    return forms.FloatField(
        label=label,
        initial=initial,
        min_value=minimum,
        max_value=maximum,
        required=required,
        widget=forms.NumberInput(attrs=attrs),
        **kw,
    )


def _count(label, initial, *, minimum=1, maximum=None, **kw):
    return forms.IntegerField(
        label=label,
        initial=initial,
        min_value=minimum,
        max_value=maximum,
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
        **kw,
    )


def calibration_label(result) -> str:
    return (
        f"{result.calibration_factor:.2f}× — {result.endpoint.name}, {result.started_at:%Y-%m-%d}"
    )


class BuilderForm(forms.Form):
    # Plain rows: the engine specs come from sizing's in-process catalog cache.
    llm = forms.ModelChoiceField(
        queryset=LLMModel.objects.all(), to_field_name="slug", label="Model", initial=DEFAULT_LLM
    )
    accelerator = forms.ModelChoiceField(
        queryset=Accelerator.objects.all(),
        to_field_name="slug",
        label="Accelerator",
        initial=DEFAULT_ACCELERATOR,
    )
    gpu_price = forms.ModelChoiceField(
        queryset=GpuPrice.objects.select_related("provider", "accelerator"),
        required=False,
        label="GPU-hour price",
        help_text="A provider's dated price, or type a rate below.",
    )
    usd_per_gpu_hour = _number(
        "or a rate, USD per GPU-hour", DEFAULT_USD_PER_GPU_HOUR, minimum=0.0001
    )
    api_price = forms.ModelChoiceField(
        queryset=ApiPrice.objects.select_related("provider"),
        required=False,
        label="API price",
        help_text="A provider's dated price per million tokens, or type them below.",
    )
    api_usd_per_m_input_hit = _number("Input, cache hit, USD per M", DEFAULT_API_HIT)
    api_usd_per_m_input_miss = _number("Input, cache miss, USD per M", DEFAULT_API_MISS)
    api_usd_per_m_output = _number("Output, USD per M", DEFAULT_API_OUTPUT)
    gateway_usd_per_month = _number(
        "Gateway VPS, USD a month",
        0,
        help_text="The small self-hosted box that keeps the key, logs, retries and budgets.",
    )

    context_tokens = _count("Context, tokens", _W.context_tokens)
    concurrency = _count("Concurrent users", DEFAULT_CONCURRENCY)
    kv_dtype = forms.ChoiceField(
        label="KV cache dtype",
        required=False,
        choices=[("", "the model's own")] + [(d, d) for d in KV_DTYPE_BYTES],
    )
    monthly_input_m_tokens = _number("Input a month, M tokens", 0)
    cached_input_pct = _number("of it cache hits, %", 0, maximum=100)
    monthly_output_m_tokens = _number("Output a month, M tokens", DEFAULT_MONTHLY_OUTPUT_M)
    hours_per_day = _number("Hours a day", _W.hours_per_day, minimum=0.1, maximum=24)
    utilisation_pct = _number(
        "Utilisation, %",
        _W.utilisation * 100,
        minimum=1,
        maximum=100,
        help_text="Share of peak decode throughput actually used.",
    )
    prompt_tokens = _count("Prompt, tokens (prefill)", _W.prompt_tokens)

    runtime_overhead_gb = _number("Runtime overhead, GB a GPU", _A.runtime_overhead_gb)
    memory_utilisation_cap = _number(
        "Memory cap, share", _A.memory_utilisation_cap, minimum=0.05, maximum=1
    )
    activation_reserve_gb = _number("Activation reserve, GB a GPU", _A.activation_reserve_gb)
    bandwidth_efficiency = _number(
        "Bandwidth efficiency", _A.bandwidth_efficiency, minimum=0.01, maximum=1
    )
    compute_efficiency = _number(
        "Compute efficiency", _A.compute_efficiency, minimum=0.01, maximum=1
    )
    download_gb_s = _number("Download, GB/s", _A.download_gb_s, minimum=0.001)
    ram_bandwidth_gb_s = _number("System RAM, GB/s", _A.ram_bandwidth_gb_s, minimum=0.1)
    max_nodes = _count("Most nodes", _A.max_nodes, maximum=100_000)
    calibration = forms.ModelChoiceField(
        queryset=ProbeResult.objects.none(),
        required=False,
        label="Calibrate the speed from a measured endpoint",
        help_text="Scales both efficiencies by measured ÷ estimated tokens/s of a speed probe.",
    )

    def __init__(self, data=None, *, user=None, **kwargs):
        super().__init__(data, **kwargs)
        # Only speed probes of the user's own teams' endpoints can calibrate their scenarios.
        if user is not None and user.is_authenticated:
            self.fields["calibration"].queryset = calibration_results(user)
            self.fields["calibration"].label_from_instance = calibration_label
        for name, field in self.fields.items():
            # Every number has a default: a field left empty takes it rather than failing.
            if isinstance(field, forms.FloatField | forms.IntegerField):
                field.required = False
            # The live preview listens to these fields only (hx-trigger "target:.js-preview");
            # the model and accelerator selects first fetch their prices, then recompute.
            if name not in ("llm", "accelerator"):
                field.widget.attrs["class"] = "js-preview"

    def clean(self):
        data = super().clean()
        for name, field in self.fields.items():
            empty = name in data and data[name] is None
            if empty and field.initial is not None and name not in TYPED_PRICES:
                data[name] = field.initial
        acc, price = data.get("accelerator"), data.get("gpu_price")
        if acc is not None and price is not None and price.accelerator_id != acc.id:
            self.add_error(
                "gpu_price",
                f"This price is for the {price.accelerator.name}; pick one for the "
                f"{acc.name} or type a rate.",
            )
        return data

    def add_sizing_error(self, error: SizingError) -> None:
        self.add_error(form_field_for(error), error.reason)


def builder_initial() -> dict:
    """The builder's fields as a new scenario opens them (strings, as a form would post)."""
    form = BuilderForm()
    return {
        name: "" if field.initial is None else str(field.initial)
        for name, field in form.fields.items()
    }


class SaveForm(forms.ModelForm):
    tags = forms.CharField(
        required=False,
        max_length=300,
        help_text="Separate with spaces or commas.",
        widget=forms.TextInput(attrs={"placeholder": "e.g. k3 article h100"}),
    )

    class Meta:
        model = Scenario
        fields = ["name", "notes", "tags", "visibility", "team"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = Team.objects.filter(memberships__user=user)
        self.fields["team"].required = False
        self.fields["visibility"].initial = PRIVATE

    def clean_tags(self) -> str:
        return " ".join(tags_parse(self.cleaned_data.get("tags", "")))

    def clean(self):
        data = super().clean()
        if data.get("visibility") == TEAM and not data.get("team"):
            self.add_error("team", "Pick the team to share it with.")
        return data


def tags_parse(text: str) -> list[str]:
    """'K3, h100  article' -> ['k3', 'h100', 'article']: lower case, no repeats, in order."""
    seen: list[str] = []
    for tag in text.replace(",", " ").lower().split():
        tag = tag.strip("#")[:40]
        if tag and tag not in seen:
            seen.append(tag)
    return seen
