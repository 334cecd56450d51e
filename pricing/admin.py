"""Staff keep prices current here. Price rows are append-only: adding goes through the
services (who and when recorded, the series' intervals kept), a correction is a new row
prefilled from the old one, and nothing is edited or deleted in place."""

from django import forms
from django.contrib import admin, messages
from django.db.models import OuterRef, Subquery
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode

from pricing import services
from pricing.management.commands.refresh_prices import run_summary
from pricing.models import ApiPrice, Feed, FeedRun, GpuPrice, Provider


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "url"]
    list_filter = ["kind"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


class CurrentFilter(admin.SimpleListFilter):
    title = "current"
    parameter_name = "current"

    def lookups(self, request, model_admin):
        return [("yes", "Current"), ("no", "Superseded")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(valid_until__isnull=True)
        if self.value() == "no":
            return queryset.filter(valid_until__isnull=False)
        return queryset


class PriceAdmin(admin.ModelAdmin):
    """Shared by GPU and API prices: add and correct, never change or delete."""

    record = None  # the service that stores a new row
    series_fields: tuple[str, ...] = ()
    change_list_template = "pricing/admin/price_change_list.html"
    date_hierarchy = "effective_date"
    list_per_page = 50
    raw_id_fields = ["corrects"]
    history_fields = ["valid_until", "source", "feed_run", "entered_by", "created_at"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if obj is None:
            return [f for f in fields if f not in ("valid_until", "source", "correct_link")]
        return [*fields, *[f for f in self.history_fields if f not in fields], "correct_link"]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else [*self.get_fields(request, obj)]

    @admin.display(description="Correct")
    def correct_link(self, obj):
        if obj is None or obj.pk is None:
            return ""
        initial = {f: getattr(obj, f) for f in self.correction_fields()}
        initial = {k: (v.pk if hasattr(v, "pk") else v) for k, v in initial.items()}
        initial = {k: ("" if v is None else v) for k, v in initial.items()}
        url = reverse(f"admin:pricing_{obj._meta.model_name}_add")
        query = urlencode({**initial, "corrects": obj.pk})
        return format_html(
            '<a class="button" href="{}?{}">Correct this price</a> '
            "(a new dated row; this one stays as history)",
            url,
            query,
        )

    def correction_fields(self) -> list[str]:
        return [*self.series_fields, *self.model.VALUE_FIELDS, "effective_date", "source_url"]

    def save_model(self, request, obj, form, change):
        stored = type(self).record(
            price=obj, entered_by=request.user, corrects=form.cleaned_data.get("corrects")
        )
        obj.pk = stored.pk
        obj.created_at = stored.created_at
        obj.valid_until = stored.valid_until

    def changelist_view(self, request, extra_context=None):
        extra = {"import_url": reverse("admin:pricing_prices_import"), **(extra_context or {})}
        return super().changelist_view(request, extra_context=extra)

    @admin.display(boolean=True, description="current")
    def is_current(self, obj):
        return obj.valid_until is None


@admin.register(GpuPrice)
class GpuPriceAdmin(PriceAdmin):
    record = staticmethod(services.gpu_price_record)
    series_fields = (
        "provider",
        "accelerator",
        "kind",
        "term_months",
        "region",
        "zone",
        "gpu_count",
        "offer",
    )
    list_display = [
        "accelerator",
        "provider",
        "kind",
        "region",
        "gpu_count",
        "offer",
        "usd_per_gpu_hour",
        "effective_date",
        "is_current",
        "source",
        "entered_by",
        "created_at",
    ]
    list_filter = [CurrentFilter, "provider", "accelerator", "kind", "effective_date", "source"]
    list_select_related = ["provider", "accelerator", "entered_by"]
    search_fields = ["offer", "region", "note"]
    fields = [
        "provider",
        "accelerator",
        "kind",
        "term_months",
        "region",
        "zone",
        "gpu_count",
        "offer",
        "usd_per_gpu_hour",
        "effective_date",
        "source_url",
        "note",
        "corrects",
    ]

    def get_urls(self):
        return [
            path(
                "import/",
                self.admin_site.admin_view(self.import_view),
                name="pricing_prices_import",
            ),
            *super().get_urls(),
        ]

    def import_view(self, request):
        """Upload a file in any feed format; the same parser and store as a feed run."""
        if not (
            request.user.has_perm("pricing.add_gpuprice")
            or request.user.has_perm("pricing.add_apiprice")
        ):
            return HttpResponseRedirect(reverse("admin:index"))
        form = PriceImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            run = services.prices_import(
                data=upload.read(),
                filename=upload.name,
                format=form.cleaned_data["format"],
                provider=form.cleaned_data["provider"],
                entered_by=request.user,
            )
            level = messages.SUCCESS if run.status == FeedRun.OK else messages.ERROR
            self.message_user(request, run_summary(run), level)
            return HttpResponseRedirect(reverse("admin:pricing_feedrun_change", args=[run.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Import prices",
            "form": form,
            "opts": self.model._meta,
        }
        return render(request, "pricing/admin/import.html", context)


class PriceImportForm(forms.Form):
    file = forms.FileField(help_text="CSV or JSON, up to the feed size cap.")
    format = forms.ChoiceField(choices=Feed.FORMATS, initial=Feed.K3PLANNER_CSV)
    provider = forms.CharField(
        required=False,
        max_length=120,
        help_text="For files that do not name it (SkyPilot, gpuhunt): e.g. aws, lambda.",
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = services.feed_max_bytes()
        if upload.size > limit:
            raise forms.ValidationError(f"{upload.size:,} bytes is over the {limit:,} cap.")
        return upload


@admin.register(ApiPrice)
class ApiPriceAdmin(PriceAdmin):
    record = staticmethod(services.api_price_record)
    series_fields = ("provider", "model_id", "llm")
    list_display = [
        "model_id",
        "provider",
        "llm",
        "usd_per_m_input_cache_hit",
        "usd_per_m_input_cache_miss",
        "usd_per_m_output",
        "context_tokens",
        "effective_date",
        "is_current",
        "source",
        "entered_by",
        "created_at",
    ]
    list_filter = [CurrentFilter, "provider", "llm", "effective_date", "source"]
    list_select_related = ["provider", "llm", "entered_by"]
    search_fields = ["model_id", "note"]
    fields = [
        "provider",
        "model_id",
        "llm",
        "usd_per_m_input_cache_hit",
        "usd_per_m_input_cache_miss",
        "usd_per_m_output",
        "context_tokens",
        "effective_date",
        "source_url",
        "note",
        "corrects",
    ]


@admin.register(Feed)
class FeedAdmin(admin.ModelAdmin):
    list_display = ["name", "format", "location", "provider", "enabled", "last_run"]
    list_filter = ["format", "enabled"]
    search_fields = ["name", "location"]
    actions = ["run_now"]

    def get_queryset(self, request):
        last = FeedRun.objects.filter(feed=OuterRef("pk")).order_by("-started_at", "-pk")
        return (
            super()
            .get_queryset(request)
            .annotate(
                last_run_id=Subquery(last.values("pk")[:1]),
                last_run_status=Subquery(last.values("status")[:1]),
                last_run_started=Subquery(last.values("started_at")[:1]),
            )
        )

    @admin.display(description="last run")
    def last_run(self, feed):
        if feed.last_run_id is None:
            return "never"
        url = reverse("admin:pricing_feedrun_change", args=[feed.last_run_id])
        started = timezone.localtime(feed.last_run_started)
        return format_html(
            '<a href="{}">{} {}</a>', url, feed.last_run_status, f"{started:%Y-%m-%d %H:%M}"
        )

    @admin.action(description="Run the selected feeds now")
    def run_now(self, request, queryset):
        for feed in queryset:
            run = services.feed_refresh(feed=feed, triggered_by=request.user)
            url = reverse("admin:pricing_feedrun_change", args=[run.pk])
            level = messages.SUCCESS if run.status == FeedRun.OK else messages.ERROR
            self.message_user(
                request, format_html('{} (<a href="{}">run log</a>)', run_summary(run), url), level
            )


@admin.register(FeedRun)
class FeedRunAdmin(admin.ModelAdmin):
    list_display = [
        "label",
        "status",
        "started_at",
        "finished_at",
        "rows_read",
        "prices_added",
        "prices_unchanged",
        "rows_rejected",
        "rows_skipped",
        "triggered_by",
    ]
    list_filter = ["status", "feed"]
    list_select_related = ["triggered_by"]
    fields = [
        "feed",
        "label",
        "status",
        "started_at",
        "finished_at",
        "triggered_by",
        "rows_read",
        "rows_skipped",
        "rows_rejected",
        "prices_added",
        "prices_unchanged",
        "providers_created",
        "error",
        "rejection_log",
    ]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="rejected rows")
    def rejection_log(self, run):
        if not run.rejections:
            return "none"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((r.get("row", ""), r.get("field", ""), r.get("reason", "")) for r in run.rejections),
        )
        return format_html(
            '<table class="rejections"><thead><tr><th>row</th><th>field</th><th>why</th></tr>'
            "</thead><tbody>{}</tbody></table>",
            rows,
        )
