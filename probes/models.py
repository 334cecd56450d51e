"""A team's inference endpoints, what each probe found, and the status changes between them."""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from probes import keys, probe

STATUS_CHOICES = [
    (probe.UP, "Up"),
    (probe.LOADING, "Loading"),
    (probe.DOWN, "Down"),
    (probe.AUTH_ERROR, "Auth error"),
    (probe.MODEL_MISSING, "Model missing"),
    (probe.TIMEOUT, "Timeout"),
    (probe.BAD_RESPONSE, "Bad response"),
]
UNKNOWN = "unknown"  # never probed


def validate_base_url(value: str) -> None:
    try:
        probe.validate_base_url(value)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None


def validate_env_name(value: str) -> None:
    try:
        keys.validate_env_name(value)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None


class Endpoint(models.Model):
    KINDS = [
        (probe.VLLM, "vLLM"),
        (probe.SGLANG, "SGLang"),
        (probe.LLAMA_CPP, "llama.cpp server (llama-server)"),
        (probe.LLAMA_CPP_PYTHON, "llama-cpp-python server"),
        (probe.OLLAMA, "Ollama"),
        (probe.HOSTED, "Hosted OpenAI-compatible API"),
    ]

    team = models.ForeignKey("teams.Team", on_delete=models.CASCADE, related_name="endpoints")
    name = models.CharField(max_length=100)
    base_url = models.CharField(
        max_length=500,
        validators=[validate_base_url],
        help_text="The server's root, e.g. http://10.0.0.5:8000 (a trailing /v1 is fine).",
    )
    kind = models.CharField(max_length=20, choices=KINDS, default=probe.VLLM)
    model_id = models.CharField(
        max_length=200, help_text="The id /v1/models should list (the served model name)."
    )
    # What it runs on, for the engine's estimate (self-hosted).
    llm = models.ForeignKey(
        "sizing.LLMModel",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="endpoints",
        verbose_name="catalog model",
    )
    accelerator = models.ForeignKey(
        "sizing.Accelerator",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="endpoints",
    )
    gpu_count = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(4096)]
    )
    # What it costs, for a hosted API.
    api_price = models.ForeignKey(
        "pricing.ApiPrice",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="endpoints",
        verbose_name="API price",
        help_text="A hosted API's price row (per million tokens).",
    )
    # The key: either the name of an environment variable, or the key itself, encrypted.
    key_env_var = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_env_name],
        verbose_name="key environment variable",
        help_text=f"Read where probes run; must start with {keys.ENV_PREFIX}.",
    )
    key_encrypted = models.TextField(blank=True, editable=False)

    interval_s = models.PositiveIntegerField(
        default=60,
        validators=[MinValueValidator(15), MaxValueValidator(86400)],
        verbose_name="health interval (s)",
    )
    timeout_s = models.FloatField(
        default=10.0,
        validators=[MinValueValidator(0.5), MaxValueValidator(60)],
        verbose_name="timeout (s)",
        help_text="Each probe's whole time, connection to last byte.",
    )
    speed_interval_s = models.PositiveIntegerField(
        default=3600,
        validators=[MaxValueValidator(7 * 86400)],
        verbose_name="speed interval (s)",
        help_text="0: measure speed on demand only.",
    )
    speed_concurrency = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(64)],
        verbose_name="parallel streams",
        help_text="Streams in the speed probe; also the batch of the estimate.",
    )
    speed_max_tokens = models.PositiveSmallIntegerField(
        default=32, validators=[MinValueValidator(2), MaxValueValidator(1024)]
    )
    enabled = models.BooleanField(default=True, help_text="Probed on the schedule.")

    status = models.CharField(
        max_length=20, choices=[*STATUS_CHOICES, (UNKNOWN, "Not probed yet")], default=UNKNOWN
    )
    status_since = models.DateTimeField(null=True, blank=True, editable=False)
    last_probed_at = models.DateTimeField(null=True, blank=True, editable=False)
    next_probe_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_speed_at = models.DateTimeField(null=True, blank=True, editable=False)
    next_speed_at = models.DateTimeField(null=True, blank=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["team", "name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="endpoint_name_per_team"),
            models.CheckConstraint(
                condition=models.Q(key_env_var="") | models.Q(key_encrypted=""),
                name="endpoint_one_key_source",
            ),
        ]
        indexes = [models.Index(fields=["enabled", "next_probe_at"], name="endpoint_due")]

    def __str__(self) -> str:
        return self.name

    @property
    def has_stored_key(self) -> bool:
        return bool(self.key_encrypted)

    @property
    def key_source(self) -> str:
        """How the key is kept, for display: never the key itself."""
        if self.key_encrypted:
            return "stored encrypted"
        if self.key_env_var:
            return f"environment variable {self.key_env_var}"
        return "no key"

    def clean(self) -> None:
        if self.timeout_s and self.interval_s and self.timeout_s >= self.interval_s:
            raise ValidationError({"timeout_s": "The timeout must be shorter than the interval."})


class ProbeResult(models.Model):
    HEALTH = "health"
    SPEED = "speed"
    KINDS = [(HEALTH, "Health"), (SPEED, "Speed")]

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="results")
    kind = models.CharField(max_length=6, choices=KINDS, default=HEALTH)
    started_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=20, choices=STATUS_CHOICES)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    health_http_status = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The kind's own health route."
    )
    latency_ms = models.FloatField(null=True, blank=True, help_text="GET /v1/models.")
    models_listed = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)

    # Speed probes.
    concurrency = models.PositiveSmallIntegerField(null=True, blank=True)
    ttft_ms = models.FloatField(null=True, blank=True, verbose_name="time to first token (ms)")
    tokens_per_s = models.FloatField(
        null=True, blank=True, help_text="Output tokens/s, all streams together, decode only."
    )
    tokens_per_s_per_stream = models.FloatField(null=True, blank=True)
    total_ms = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    # The engine's estimate for the same model, hardware and batch, when the probe ran.
    estimated_tokens_per_s = models.FloatField(null=True, blank=True)
    estimate_basis = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [
            models.Index(fields=["endpoint", "kind", "-started_at"], name="result_history"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint} {self.kind} {self.status} at {self.started_at:%Y-%m-%d %H:%M:%S}"

    @property
    def calibration_factor(self) -> float | None:
        """Measured ÷ estimated tokens/s: what a scenario multiplies the estimate by."""
        if self.tokens_per_s and self.estimated_tokens_per_s:
            return self.tokens_per_s / self.estimated_tokens_per_s
        return None


class StatusEvent(models.Model):
    """A change of an endpoint's status (up → down, …), shown on the dashboard and webhooked."""

    SENT = "sent"
    FAILED = "failed"
    NO_WEBHOOK = "none"
    PENDING = ""
    WEBHOOK_STATES = [
        (PENDING, "Pending"),
        (SENT, "Sent"),
        (FAILED, "Failed"),
        (NO_WEBHOOK, "No webhook"),
    ]

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="events")
    created_at = models.DateTimeField(default=timezone.now)
    from_status = models.CharField(
        max_length=20, choices=[*STATUS_CHOICES, (UNKNOWN, "Not probed yet")]
    )
    to_status = models.CharField(max_length=20, choices=STATUS_CHOICES)
    error = models.TextField(blank=True)
    result = models.ForeignKey(
        ProbeResult, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    webhook_state = models.CharField(
        max_length=6, choices=WEBHOOK_STATES, default=PENDING, blank=True
    )
    webhook_http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    webhook_error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["endpoint", "-created_at"], name="event_history")]

    def __str__(self) -> str:
        return f"{self.endpoint}: {self.from_status} → {self.to_status}"
