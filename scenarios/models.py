"""Saved scenarios: the builder's inputs, what they were computed with, and the key figures.

A scenario keeps a snapshot of the catalog values and prices it used (with their dates), so an
old plan stays reproducible after the catalog or the prices move on. Its key figures are
stored in columns so the library lists thousands without re-running the engine.
"""

from django.conf import settings
from django.db import models

from sizing.models import Accelerator, LLMModel
from teams.models import Team

PRIVATE, TEAM, PUBLIC = "private", "team", "public"
VISIBILITY_VALUES = (PRIVATE, TEAM, PUBLIC)


class Scenario(models.Model):
    VISIBILITIES = [
        (PRIVATE, "Private: only me"),
        (TEAM, "Team: members of the team"),
        (PUBLIC, "Public: anyone with the link"),
    ]

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scenarios"
    )
    team = models.ForeignKey(
        Team,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="scenarios",
        help_text="The team it is shared with when visibility is 'team'.",
    )
    visibility = models.CharField(max_length=8, choices=VISIBILITIES, default=PRIVATE)
    name = models.CharField(max_length=120)
    notes = models.TextField(blank=True)
    tags = models.CharField(max_length=300, blank=True, help_text="Space-separated, lower case.")
    # Name, model, accelerator and tags in lower case: the library's search is one LIKE a word.
    search_text = models.CharField(max_length=700, blank=True, editable=False)

    # The catalog rows it was built from; the snapshot keeps their values if they change or go.
    llm = models.ForeignKey(
        LLMModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="scenarios"
    )
    model_name = models.CharField(max_length=120)
    accelerator = models.ForeignKey(
        Accelerator, null=True, blank=True, on_delete=models.SET_NULL, related_name="scenarios"
    )
    accelerator_name = models.CharField(max_length=80)

    inputs = models.JSONField(help_text="The builder's fields, to reopen it.")
    snapshot = models.JSONField(help_text="Catalog values and prices used, with their dates.")
    prices_as_of = models.DateField(null=True, blank=True, help_text="Date of the oldest price.")

    # Key figures at save time (null: unknown, e.g. no price given or no layout fits).
    gpus = models.PositiveIntegerField(null=True, blank=True)
    weights_bytes = models.FloatField(null=True, blank=True)
    tier1_usd_per_month = models.FloatField(null=True, blank=True)
    tier3_usd_per_month = models.FloatField(null=True, blank=True)
    break_even_output_tokens_per_month = models.FloatField(null=True, blank=True)
    tokens_per_s = models.FloatField(null=True, blank=True)
    tokens_per_s_per_usd_per_hour = models.FloatField(null=True, blank=True)

    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated", "-id"]
        indexes = [
            models.Index(fields=["-updated", "-id"], name="scenario_recent"),
            models.Index(fields=["owner", "-updated"], name="scenario_owner_recent"),
            models.Index(fields=["visibility", "team", "-updated"], name="scenario_shared_recent"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def tag_list(self) -> list[str]:
        return self.tags.split()
