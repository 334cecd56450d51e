from django.contrib import admin

from scenarios.models import Scenario


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "visibility", "team", "model_name", "accelerator_name",
                    "prices_as_of", "updated"]  # fmt: skip
    list_filter = ["visibility", "team"]
    search_fields = ["name", "tags", "model_name", "accelerator_name", "owner__username"]
    list_select_related = ["owner", "team"]
    readonly_fields = ["inputs", "snapshot", "created", "updated"]
    raw_id_fields = ["owner", "llm", "accelerator"]
