"""Dated prices: GPU-hours by provider and accelerator, API tokens by provider and model id.

Prices are append-only. A change, a correction or a feed refresh is a new dated row; the old
row stays as history. The only column ever written after insert is `valid_until`, the date the
next row of the same series took effect: the price, its date, source and author never change.
It is what lets "the current price as of D" be one indexed range query at millions of rows
(`effective_date <= D < valid_until`) instead of a newest-per-group scan.
"""

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

ON_DEMAND, SPOT, RESERVED = "on_demand", "spot", "reserved"
FEED, ADMIN, API = "feed", "admin", "api"


class Provider(models.Model):
    CLOUD, NEOCLOUD, MARKETPLACE, API_VENDOR, ASSUMPTION = (
        "cloud",
        "neocloud",
        "marketplace",
        "api",
        "assumption",
    )
    KINDS = [
        (CLOUD, "Cloud"),
        (NEOCLOUD, "Neocloud"),
        (MARKETPLACE, "Marketplace"),
        (API_VENDOR, "API"),
        (ASSUMPTION, "Assumption (not a quote)"),
    ]

    name = models.CharField(max_length=120, unique=True)
    slug = models.SlugField(max_length=120, unique=True)
    kind = models.CharField(max_length=12, choices=KINDS, default=CLOUD)
    url = models.URLField(max_length=300, blank=True)
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Feed(models.Model):
    K3PLANNER_CSV = "k3planner_csv"
    K3PLANNER_JSON = "k3planner_json"
    GPUHUNT_CSV = "gpuhunt_csv"
    SKYPILOT_CSV = "skypilot_csv"
    LITELLM_JSON = "litellm_json"
    FORMATS = [
        (K3PLANNER_CSV, "k3planner CSV"),
        (K3PLANNER_JSON, "k3planner JSON"),
        (GPUHUNT_CSV, "gpuhunt catalog CSV"),
        (SKYPILOT_CSV, "SkyPilot catalog vms.csv"),
        (LITELLM_JSON, "LiteLLM model_prices_and_context_window.json"),
    ]

    name = models.CharField(max_length=120, unique=True)
    format = models.CharField(max_length=20, choices=FORMATS)
    location = models.CharField(
        max_length=500,
        help_text="An http(s) URL, or a file path (relative paths are read from the project).",
    )
    provider = models.CharField(
        max_length=120,
        blank=True,
        help_text="Provider of every row, for files that do not name it (SkyPilot; gpuhunt "
        "defaults to the file's name).",
    )
    enabled = models.BooleanField(
        default=True, help_text="Active: refreshed by the daily schedule and 'refresh_prices'."
    )
    source_url = models.URLField(
        max_length=500, blank=True, help_text="Upstream page to cite; defaults to the URL fed."
    )
    observed_on = models.DateField(
        null=True,
        blank=True,
        help_text="For a static file with no dates in it: when its prices were observed. "
        "Empty: the day of each run.",
    )
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class FeedRun(models.Model):
    RUNNING, OK, FAILED = "running", "ok", "failed"
    STATUSES = [(RUNNING, "Running"), (OK, "OK"), (FAILED, "Failed")]

    feed = models.ForeignKey(
        Feed, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    label = models.CharField(max_length=200, help_text="Feed name, or the uploaded file's name.")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=STATUSES, default=RUNNING)
    triggered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    rows_read = models.PositiveIntegerField(default=0, help_text="Data rows in the file.")
    rows_skipped = models.PositiveIntegerField(
        default=0, help_text="Rows with no GPU or API price in them (CPU instances, empty prices)."
    )
    rows_rejected = models.PositiveIntegerField(default=0)
    prices_added = models.PositiveIntegerField(default=0)
    prices_unchanged = models.PositiveIntegerField(
        default=0, help_text="Equal to the current price for the same key: no row added."
    )
    rejections = models.JSONField(default=list, blank=True, help_text="[{row, field, reason}]")
    providers_created = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True, help_text="Why the run failed; nothing was changed.")

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["feed", "-started_at"], name="feedrun_feed_started")]

    def __str__(self) -> str:
        return f"{self.label} at {self.started_at:%Y-%m-%d %H:%M} ({self.status})"


class PriceRow(models.Model):
    """What every price row carries: when it applies, where it came from, who entered it."""

    SOURCES = [(FEED, "Feed"), (ADMIN, "Admin"), (API, "API")]

    # Foreign keys carry no index of their own (db_index=False): the composite indexes below
    # lead with provider and accelerator, corrections have a partial one, and each index is
    # paid for on every insert. Deleting a user or a run scans the table: rare, still correct.
    provider = models.ForeignKey(
        Provider, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    effective_date = models.DateField(help_text="The price applies from this date.")
    valid_until = models.DateField(
        null=True,
        blank=True,
        editable=False,
        help_text="Effective date of the next row of the same series; empty while current.",
    )
    source = models.CharField(max_length=6, choices=SOURCES, default=ADMIN)
    source_url = models.URLField(max_length=500, blank=True)
    note = models.CharField(max_length=300, blank=True)
    # The run that added the row. No database constraint: checking it on every row of a big
    # feed costs a lookup per row at commit, and a dangling pointer in this audit column harms
    # nothing (deleting a run through Django still clears it).
    feed_run = models.ForeignKey(
        FeedRun,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    corrects = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="corrections",
        db_index=False,
        help_text="The row this one corrects (it stays as history).",
    )
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        abstract = True

    def is_current(self, as_of) -> bool:
        return self.effective_date <= as_of and (
            self.valid_until is None or self.valid_until > as_of
        )


class GpuPrice(PriceRow):
    KINDS = [(ON_DEMAND, "On-demand"), (SPOT, "Spot"), (RESERVED, "Reserved")]
    # A series is one offer: every row with the same values here is a price of the same thing.
    SERIES_FIELDS = (
        "provider_id",
        "accelerator_id",
        "kind",
        "term_months",
        "region",
        "zone",
        "gpu_count",
        "offer",
    )
    VALUE_FIELDS = ("usd_per_gpu_hour",)

    provider = models.ForeignKey(
        Provider, on_delete=models.PROTECT, related_name="gpu_prices", db_index=False
    )
    accelerator = models.ForeignKey(
        "sizing.Accelerator", on_delete=models.PROTECT, related_name="prices", db_index=False
    )
    kind = models.CharField(max_length=10, choices=KINDS, default=ON_DEMAND)
    term_months = models.PositiveSmallIntegerField(
        default=0, help_text="Commitment of a reserved price; 0 for on-demand and spot."
    )
    region = models.CharField(max_length=64, blank=True, help_text="Empty: any region.")
    zone = models.CharField(max_length=64, blank=True)
    gpu_count = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1)], help_text="GPUs in the offer (instance)."
    )
    offer = models.CharField(max_length=120, blank=True, help_text="Instance type or plan name.")
    usd_per_gpu_hour = models.DecimalField(max_digits=12, decimal_places=6)

    class Meta:
        verbose_name = "GPU price"
        ordering = ["-effective_date", "-id"]
        indexes = [
            # Current as of D for an accelerator: rows with valid_until null or after D. The
            # trailing columns let the cheapest-offer subquery read the index alone (no heap).
            models.Index(
                fields=[
                    "accelerator",
                    "kind",
                    "valid_until",
                    "effective_date",
                    "usd_per_gpu_hour",
                    "id",
                    "provider",
                ],
                name="gpuprice_acc_open_covering",
            ),
            # Today's offers of an accelerator in price order: the cheapest is the first entry.
            models.Index(
                fields=[
                    "accelerator",
                    "kind",
                    "usd_per_gpu_hour",
                    "id",
                    "provider",
                    "effective_date",
                ],
                condition=Q(valid_until__isnull=True),
                name="gpuprice_open_price_covering",
            ),
            # A series' history; its leading provider also serves the provider foreign key.
            models.Index(
                fields=["provider", "accelerator", "kind", "region", "effective_date"],
                name="gpuprice_series_history",
            ),
            # Corrections are few; without an index the self-reference makes deletes quadratic.
            models.Index(
                fields=["corrects"],
                condition=Q(corrects__isnull=False),
                name="gpuprice_corrections",
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(usd_per_gpu_hour__gt=0), name="gpuprice_positive"),
        ]

    def __str__(self) -> str:
        where = f" {self.region}" if self.region else ""
        return (
            f"{self.provider} {self.accelerator} {self.kind}{where}: ${self.usd_per_gpu_hour}/GPU-h"
        )

    @property
    def series(self) -> tuple:
        return tuple(getattr(self, f) for f in self.SERIES_FIELDS)


class ApiPrice(PriceRow):
    SERIES_FIELDS = ("provider_id", "model_id")
    VALUE_FIELDS = (
        "usd_per_m_input_cache_hit",
        "usd_per_m_input_cache_miss",
        "usd_per_m_output",
        "context_tokens",
    )

    provider = models.ForeignKey(
        Provider, on_delete=models.PROTECT, related_name="api_prices", db_index=False
    )
    model_id = models.CharField(max_length=200, help_text="The id the provider's API takes.")
    llm = models.ForeignKey(
        "sizing.LLMModel",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="api_prices",
        db_index=False,
        help_text="The catalog model, when known.",
    )
    usd_per_m_input_cache_hit = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="Per million input tokens read from the cache; empty when not offered.",
    )
    usd_per_m_input_cache_miss = models.DecimalField(max_digits=12, decimal_places=6)
    usd_per_m_output = models.DecimalField(max_digits=12, decimal_places=6)
    context_tokens = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        verbose_name = "API price"
        ordering = ["-effective_date", "-id"]
        indexes = [
            models.Index(
                fields=["provider", "model_id", "effective_date"], name="apiprice_series_history"
            ),
            models.Index(fields=["valid_until", "effective_date"], name="apiprice_current"),
            models.Index(fields=["llm", "valid_until"], name="apiprice_llm_current"),
            models.Index(fields=["provider", "valid_until"], name="apiprice_provider_open"),
            models.Index(
                fields=["corrects"],
                condition=Q(corrects__isnull=False),
                name="apiprice_corrections",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(usd_per_m_input_cache_miss__gte=0)
                & Q(usd_per_m_output__gte=0)
                & (Q(usd_per_m_input_cache_hit__isnull=True) | Q(usd_per_m_input_cache_hit__gte=0)),
                name="apiprice_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.model_id}: ${self.usd_per_m_output}/M out"

    @property
    def series(self) -> tuple:
        return (self.provider_id, self.model_id)
