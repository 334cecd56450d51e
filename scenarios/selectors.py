"""Queries for scenarios and the prices the builder offers. Query counts do not grow with rows.

Who sees what: the owner sees their scenarios; members of a scenario's team see it when it is
shared with the team; everyone sees public ones. Only the owner edits or deletes. Anything
else is a 404, whether asked for by URL, by an HTMX request or through the API.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import asdict

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Page, Paginator
from django.db.models import Min, Q, QuerySet
from django.http import Http404
from django.utils import timezone

from pricing import selectors as prices
from pricing.models import ApiPrice, GpuPrice
from scenarios.models import PUBLIC, TEAM, Scenario
from sizing.engine.fmt import fmt_usd
from sizing.selectors import accelerator_spec, accelerators, llm_models, model_spec
from teams.models import Membership

COMPARE_MIN, COMPARE_MAX = 2, 6
# Columns the library and compare never read: the big JSON ones.
HEAVY_FIELDS = ("inputs", "snapshot", "notes")


def scenarios_visible_to(user) -> QuerySet[Scenario]:
    """Scenarios `user` may see (anonymous users: public ones), newest first, one query."""
    qs = Scenario.objects.select_related("owner", "team")
    if not user.is_authenticated:
        return qs.filter(visibility=PUBLIC)
    my_teams = Membership.objects.filter(user=user).values("team_id")
    return qs.filter(
        Q(owner=user) | Q(visibility=PUBLIC) | Q(visibility=TEAM, team_id__in=my_teams)
    )


def scenario_for_user(user, scenario_id: int, *, for_edit: bool = False) -> Scenario:
    """The scenario if `user` may see it (Http404 otherwise); with for_edit, only its owner
    gets it (PermissionDenied for others who can see it)."""
    try:
        scenario = scenarios_visible_to(user).get(pk=scenario_id)
    except (Scenario.DoesNotExist, ValueError, TypeError):
        raise Http404("No such scenario") from None
    if for_edit and scenario.owner_id != user.id:
        raise PermissionDenied("Only the owner can change or delete a scenario.")
    return scenario


def _tag_q(tag: str) -> Q:
    # tags is "a b c": match whole words only, on any database.
    return (
        Q(tags=tag)
        | Q(tags__startswith=f"{tag} ")
        | Q(tags__endswith=f" {tag}")
        | Q(tags__contains=f" {tag} ")
    )


def scenarios_search(
    user,
    *,
    q: str = "",
    model: str = "",
    accelerator: str = "",
    tag: str = "",
    team: int | None = None,
    mine: bool = False,
) -> QuerySet[Scenario]:
    """The library: visible scenarios matching every filter given (model and accelerator are
    catalog slugs). The JSON columns are deferred; paginate the result."""
    qs = scenarios_visible_to(user).defer(*HEAVY_FIELDS)
    for word in q.lower().split():
        qs = qs.filter(search_text__contains=word)
    if model:
        qs = qs.filter(llm__slug=model)
    if accelerator:
        qs = qs.filter(accelerator__slug=accelerator)
    if tag:
        qs = qs.filter(_tag_q(tag.lower()))
    if team:
        qs = qs.filter(team_id=team, visibility__in=(TEAM, PUBLIC))
    if mine and user.is_authenticated:
        qs = qs.filter(owner=user)
    return qs


def scenarios_page(user, *, page=1, per_page: int = 25, **filters) -> Page:
    """One page of `scenarios_search(user, **filters)`, in three queries at any size: the count,
    the page's ids (sorting ids alone, not whole rows), then those rows with owner and team."""
    ids = scenarios_search(user, **filters).values_list("id", flat=True)
    found = Paginator(ids, per_page).get_page(page)
    rows = Scenario.objects.select_related("owner", "team").defer(*HEAVY_FIELDS)
    by_id = rows.in_bulk(list(found.object_list))
    found.object_list = [by_id[pk] for pk in found.object_list if pk in by_id]
    return found


def parse_ids(values: Iterable[str]) -> list[int]:
    """'3', '7,9' -> [3, 7, 9]: ids in the order given, repeats dropped, junk refused."""
    ids: list[int] = []
    for value in values:
        for part in str(value).split(","):
            part = part.strip()
            if not part:
                continue
            if not part.isdigit():
                raise ValidationError(f"{part!r} is not a scenario id.")
            if int(part) not in ids:
                ids.append(int(part))
    return ids


def scenarios_compare(user, ids: Iterable[int]) -> list[Scenario]:
    """2 to 6 scenarios `user` may see, in the order asked for, in one query.

    ValidationError for fewer than 2 or more than 6; Http404 if any is not visible.
    """
    ids = list(dict.fromkeys(ids))
    if not COMPARE_MIN <= len(ids) <= COMPARE_MAX:
        raise ValidationError(f"Pick {COMPARE_MIN} to {COMPARE_MAX} scenarios to compare.")
    found = {s.pk: s for s in scenarios_visible_to(user).filter(pk__in=ids)}
    if len(found) != len(ids):
        raise Http404("No such scenario")
    return [found[i] for i in ids]


# ------------------------------------------------------------------ prices


def gpu_price_choices(
    *, accelerator_id: int | None, picked: str = "", as_of: dt.date | None = None
) -> tuple[list[GpuPrice], int]:
    """(offers to pick from, how many current offers there are) for one accelerator.

    The offers are each provider's cheapest of each kind, cheapest first, and the picked price
    if it is still a current offer of this accelerator: a feed with a row per region would make
    a select of hundreds. Every offer is on the prices page. Three queries at most.
    """
    if accelerator_id is None:
        return [], 0
    choices = prices.gpu_offers_cheapest_of_each(
        partition=("provider_id", "kind"), limit=1, accelerator=accelerator_id, as_of=as_of
    )
    count = sum(row.offers_in_group for row in choices)  # the groups cover every offer
    if picked.isdigit() and int(picked) not in {row.pk for row in choices}:
        current = prices.gpu_prices_current(accelerator=accelerator_id, as_of=as_of)
        choices += list(current.filter(pk=int(picked)))
    return choices, count


def api_prices_current(*, llm_id: int | None, as_of: dt.date | None = None):
    """Current API prices for one catalog model, cheapest output first (one query)."""
    if llm_id is None:
        return ApiPrice.objects.none()
    return prices.api_prices_current(llm=llm_id, as_of=as_of)


def gpu_price_label(row: GpuPrice) -> str:
    where = f", {row.region}" if row.region else ""
    offer = f" {row.offer}" if row.offer else ""
    return (
        f"{row.provider.name}{offer} ({row.get_kind_display()}{where}): "
        f"{fmt_usd(float(row.usd_per_gpu_hour))}/GPU-h as of {row.effective_date:%Y-%m-%d}"
    )


def api_price_label(row: ApiPrice) -> str:
    hit = row.usd_per_m_input_cache_hit
    hit_text = "no cache price" if hit is None else f"{fmt_usd(float(hit))} hit"
    return (
        f"{row.provider.name} {row.model_id}: {hit_text} / "
        f"{fmt_usd(float(row.usd_per_m_input_cache_miss))} miss / "
        f"{fmt_usd(float(row.usd_per_m_output))} out per M, as of {row.effective_date:%Y-%m-%d}"
    )


def gpu_price_history(*, accelerator_id: int | None) -> list[tuple[str, str, float]]:
    """(offer label, ISO date, cheapest USD per GPU-hour that day) for one accelerator, oldest
    first: one aggregate query, one point per provider, kind and date."""
    if accelerator_id is None:
        return []
    rows = (
        GpuPrice.objects.filter(accelerator_id=accelerator_id)
        .values("provider__name", "kind", "effective_date")
        .annotate(usd=Min("usd_per_gpu_hour"))
        .order_by("effective_date", "provider__name", "kind")
    )
    kinds = dict(GpuPrice.KINDS)
    return [
        (
            f"{r['provider__name']} {kinds.get(r['kind'], r['kind']).lower()}",
            r["effective_date"].isoformat(),
            float(r["usd"]),
        )
        for r in rows
    ]


def scenario_price_changes(scenario: Scenario, *, as_of: dt.date | None = None) -> list[str]:
    """Sentences saying where today's price differs from the one the scenario used (two
    queries at most). Typed rates have nothing to compare with and give no sentence."""
    as_of = as_of or timezone.localdate()
    notices = []
    used = scenario.snapshot.get("gpu_price")
    if used:
        series = {
            k: used[k]
            for k in ("provider_id", "accelerator_id", "kind", "term_months", "region", "zone",
                      "gpu_count", "offer")
            if k in used
        }  # fmt: skip
        row = GpuPrice.objects.filter(prices.current_on(as_of), **series).first()
        if row is None:
            notices.append(f"{used['provider']}'s GPU-hour price used here is no longer listed.")
        elif float(row.usd_per_gpu_hour) != used["usd_per_gpu_hour"]:
            notices.append(
                f"{used['provider']} now charges {fmt_usd(float(row.usd_per_gpu_hour))} per "
                f"GPU-hour (as of {row.effective_date:%Y-%m-%d}); this scenario used "
                f"{fmt_usd(used['usd_per_gpu_hour'])} (as of {used['effective_date']})."
            )
    used = scenario.snapshot.get("api_price")
    if used:
        row = prices.api_price_current(
            provider=used["provider_id"], model_id=used["model_id"], as_of=as_of
        )
        if row is None:
            notices.append(
                f"{used['provider']}'s price for {used['model_id']} is no longer listed."
            )
        else:
            hit = row.usd_per_m_input_cache_hit
            current = (
                None if hit is None else float(hit),
                float(row.usd_per_m_input_cache_miss),
                float(row.usd_per_m_output),
            )
            before = (
                used["usd_per_m_input_cache_hit"],
                used["usd_per_m_input_cache_miss"],
                used["usd_per_m_output"],
            )
            if current != before:
                notices.append(
                    f"{used['provider']} {used['model_id']} now costs "
                    f"{fmt_usd(current[2])} per M output and {fmt_usd(current[1])} per M input "
                    f"(as of {row.effective_date:%Y-%m-%d}); this scenario used "
                    f"{fmt_usd(before[2])} and {fmt_usd(before[1])} (as of "
                    f"{used['effective_date']})."
                )
    return notices


def scenario_catalog_changes(scenario: Scenario) -> list[str]:
    """Sentences naming the catalog figures that changed since the scenario was computed
    (four queries at most). The scenario keeps using the values it was computed with."""
    notices = []
    pairs = (
        ("model", "model_meta", llm_models(), model_spec),
        ("accelerator", "accelerator_meta", accelerators(), accelerator_spec),
    )
    for key, meta_key, rows, to_spec in pairs:
        used, meta = scenario.snapshot.get(key, {}), scenario.snapshot.get(meta_key, {})
        row = rows.filter(pk=meta.get("id")).first()
        name = used.get("name", key)
        if row is None:
            notices.append(f"{name} is no longer in the catalog.")
            continue
        now = json.loads(json.dumps(asdict(to_spec(row))))  # tuples as the JSON lists
        changed = [field for field, value in now.items() if field in used and used[field] != value]
        if changed:
            notices.append(
                f"The catalog's {name} has changed since ({', '.join(changed)}); this scenario "
                "keeps the values it was computed with."
            )
    return notices
