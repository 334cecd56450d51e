"""The catalog: LLM models, their attention layout and weight formats, and accelerators.

Every figure may be unknown (null) and is shown as unknown. Validation lives in the validators
and `clean()` so the admin, forms and the API reject impossible values with the field named.
"""

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models

from sizing.engine.specs import FULL, LINEAR, MLA, SLIDING

# Beyond anything announced (K3 is 2.8e12); catches a typo of three extra zeros.
MAX_PARAMS = 10**15

positive = MinValueValidator(1)
# Slugs keep version dots ("llama-3.1-8b"), as the vendors name their models.
slug_with_dots = RegexValidator(
    r"^[-a-zA-Z0-9_.]+$", "Use letters, numbers, dots, hyphens or underscores."
)
non_negative = MinValueValidator(0)


class WeightFormat(models.Model):
    name = models.CharField(max_length=32, unique=True)
    bits_per_weight = models.FloatField(
        validators=[MinValueValidator(0.5)], help_text="Including block scales."
    )
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-bits_per_weight", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def bytes_per_weight(self) -> float:
        return self.bits_per_weight / 8


class Sourced(models.Model):
    """Where the figures came from and when they were read."""

    source_url = models.URLField(max_length=500, blank=True)
    source_note = models.CharField(max_length=300, blank=True)
    figures_as_of = models.DateField(null=True, blank=True, help_text="Date of the source.")

    class Meta:
        abstract = True


class LLMModel(Sourced):
    KV_DTYPES = [("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8"), ("fp32", "fp32")]

    name = models.CharField(max_length=120)
    slug = models.CharField(max_length=120, unique=True, validators=[slug_with_dots])
    vendor = models.CharField(max_length=80, blank=True)
    release_date = models.DateField(null=True, blank=True)
    licence = models.CharField(max_length=80, blank=True)
    architecture = models.CharField(max_length=80, blank=True, help_text="HF architectures[0].")
    repo_id = models.CharField(
        max_length=200, blank=True, help_text="Hugging Face repo id, for the launch commands."
    )

    total_params = models.BigIntegerField(null=True, blank=True, validators=[positive])
    active_params = models.BigIntegerField(null=True, blank=True, validators=[positive])
    layers = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    hidden_size = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    vocab_size = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    attention_heads = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    max_context_tokens = models.PositiveIntegerField(null=True, blank=True, validators=[positive])

    routed_experts = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    active_experts = models.PositiveIntegerField(
        null=True, blank=True, validators=[positive], help_text="Routed experts per token."
    )
    shared_experts = models.PositiveIntegerField(null=True, blank=True)
    params_per_expert = models.BigIntegerField(null=True, blank=True, validators=[positive])
    moe_layers = models.PositiveIntegerField(null=True, blank=True)

    weight_format = models.ForeignKey(
        WeightFormat,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Format of all weights not listed in a tensor group.",
    )
    kv_dtype = models.CharField(max_length=8, choices=KV_DTYPES, default="bf16")
    checkpoint_bytes = models.BigIntegerField(
        null=True, blank=True, validators=[positive], help_text="Exact, when published."
    )
    notes = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "LLM model"

    def __str__(self) -> str:
        return self.name

    @property
    def is_moe(self) -> bool:
        return bool(self.routed_experts)

    def clean(self) -> None:
        errors = {}
        for name in ("total_params", "active_params", "params_per_expert"):
            value = getattr(self, name)
            if value is not None and value > MAX_PARAMS:
                errors[name] = f"{value:,} is beyond any model; check the units (parameters)."
        if self.total_params and self.active_params and self.active_params > self.total_params:
            errors["active_params"] = (
                f"Active parameters ({self.active_params:,}) cannot exceed the total "
                f"({self.total_params:,})."
            )
        if (
            self.routed_experts
            and self.active_experts
            and self.active_experts > self.routed_experts
        ):
            errors["active_experts"] = (
                f"Experts active per token ({self.active_experts}) cannot exceed the routed "
                f"experts ({self.routed_experts})."
            )
        if self.layers and self.moe_layers and self.moe_layers > self.layers:
            errors["moe_layers"] = (
                f"MoE layers ({self.moe_layers}) exceed the layers ({self.layers})."
            )
        if errors:
            raise ValidationError(errors)


class AttentionGroup(models.Model):
    """A run of layers sharing one attention kind (spec section 2)."""

    KINDS = [
        (FULL, "Full attention (MHA/GQA/MQA)"),
        (SLIDING, "Sliding window"),
        (MLA, "MLA (latent attention)"),
        (LINEAR, "Linear / recurrent (KDA, Gated DeltaNet, Mamba)"),
    ]
    # Which fields each kind needs; they may still be unknown (null) for an unpublished model.
    FIELDS_BY_KIND = {
        FULL: ("kv_heads", "head_dim"),
        SLIDING: ("kv_heads", "head_dim", "window_tokens"),
        MLA: ("kv_lora_rank", "qk_rope_head_dim"),
        LINEAR: ("state_heads", "state_key_dim", "state_value_dim", "conv_state_elements"),
    }

    llm = models.ForeignKey(LLMModel, on_delete=models.CASCADE, related_name="attention_groups")
    position = models.PositiveSmallIntegerField(default=0)
    kind = models.CharField(max_length=10, choices=KINDS)
    layers = models.PositiveIntegerField(validators=[positive])
    kv_heads = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    head_dim = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    window_tokens = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    kv_lora_rank = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    qk_rope_head_dim = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    state_heads = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    state_key_dim = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    state_value_dim = models.PositiveIntegerField(null=True, blank=True, validators=[positive])
    conv_state_elements = models.PositiveIntegerField(null=True, blank=True)
    state_bytes_per_element = models.FloatField(default=4.0, validators=[MinValueValidator(0.5)])
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["llm", "position", "id"]

    def __str__(self) -> str:
        return f"{self.layers} × {self.get_kind_display()}"

    def clean(self) -> None:
        needed = set(self.FIELDS_BY_KIND.get(self.kind, ()))
        errors = {}
        for name in {f for fields in self.FIELDS_BY_KIND.values() for f in fields} - needed:
            if getattr(self, name) is not None:
                errors[name] = f"Not used by {self.get_kind_display()} layers; leave it empty."
        if errors:
            raise ValidationError(errors)


class TensorGroup(models.Model):
    """Parameters stored in a format other than the model's default (gpt-oss experts: MXFP4)."""

    llm = models.ForeignKey(LLMModel, on_delete=models.CASCADE, related_name="tensor_groups")
    name = models.CharField(max_length=60)
    params = models.BigIntegerField(validators=[positive])
    weight_format = models.ForeignKey(WeightFormat, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["llm", "-params"]

    def __str__(self) -> str:
        return f"{self.name}: {self.params:,} in {self.weight_format}"


class Accelerator(Sourced):
    KINDS = [
        ("datacenter", "Data centre"),
        ("workstation", "Workstation"),
        ("consumer", "Consumer"),
        ("unified", "Unified memory"),
    ]

    name = models.CharField(max_length=80)
    slug = models.SlugField(max_length=80, unique=True)
    vendor = models.CharField(max_length=40)
    kind = models.CharField(max_length=12, choices=KINDS, default="datacenter")
    memory_gb = models.FloatField(
        validators=[MinValueValidator(1)], help_text="Decimal GB, as sold."
    )
    bandwidth_tb_s = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0.01)], help_text="Memory TB/s."
    )
    bf16_tflops = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0.1)])
    fp8_tflops = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0.1)])
    fp4_tflops = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0.1)])
    interconnect_gb_s = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0.1)], help_text="Per GPU, GB/s."
    )
    gpus_per_node = models.PositiveIntegerField(default=8, validators=[positive])
    power_w = models.FloatField(null=True, blank=True, validators=[MinValueValidator(1)])
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["-memory_gb", "name"]

    def __str__(self) -> str:
        return self.name
