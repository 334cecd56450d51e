"""Scenario pages: the builder with its live preview, saved scenarios, library, compare, exports.

Each page is one template; the region HTMX swaps is an inline partial rendered alone when
`request.htmx`. Without JavaScript the same forms post and the whole page comes back.
"""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import trigger_client_event

from pricing.models import GpuPrice
from scenarios import charts, exports, selectors, services
from scenarios.forms import ASSUMPTION_FIELDS, BuilderForm, SaveForm, builder_initial
from sizing.engine.errors import SizingError
from sizing.models import Accelerator, LLMModel
from teams.models import Team

LIBRARY_PAGE_SIZE = 25


# ------------------------------------------------------------------ the builder


def _price_options(*, llm_id, accelerator_id, gpu_value: str, api_value: str, keep=()) -> dict:
    """The GPU-hour prices for the accelerator and the API prices for the model, to pick from.

    Rows in `keep` are offered too: a reopened scenario may use a price no longer current.
    """
    gpu, gpu_offer_count = selectors.gpu_price_choices(
        accelerator_id=accelerator_id, picked=gpu_value
    )
    api = list(selectors.api_prices_current(llm_id=llm_id))
    for row in keep:
        rows = gpu if isinstance(row, GpuPrice) else api
        if row.pk not in {r.pk for r in rows}:
            rows.append(row)
    return {
        "gpu_prices": [(str(r.pk), selectors.gpu_price_label(r)) for r in gpu],
        "api_prices": [(str(r.pk), selectors.api_price_label(r)) for r in api],
        "gpu_price_value": gpu_value,
        "gpu_offer_count": gpu_offer_count,
        "gpu_offers_url": (
            f"{reverse('prices')}?accelerator={gpu[0].accelerator.slug}" if gpu else ""
        ),
        "api_price_value": api_value,
    }


def _form_price_options(form: BuilderForm) -> dict:
    cleaned = getattr(form, "cleaned_data", {})
    keep = [row for row in (cleaned.get("gpu_price"), cleaned.get("api_price")) if row]
    return _price_options(
        llm_id=_bound_id(form, "llm", LLMModel),
        accelerator_id=_bound_id(form, "accelerator", Accelerator),
        gpu_value=_value(form, "gpu_price"),
        api_value=_value(form, "api_price"),
        keep=keep,
    )


def _value(form: BuilderForm, name: str) -> str:
    value = form[name].value()
    return "" if value is None else str(value)


def _id_of(model, slug: str) -> int | None:
    return model.objects.filter(slug=slug).values_list("id", flat=True).first() if slug else None


def _bound_id(form: BuilderForm, name: str, model) -> int | None:
    picked = getattr(form, "cleaned_data", {}).get(name)
    return picked.pk if picked is not None else _id_of(model, form[name].value() or "")


def _picked_price(snapshot: dict) -> tuple[str, float] | None:
    used = snapshot.get("gpu_price")
    if used:
        return used["effective_date"], used["usd_per_gpu_hour"]
    rate = snapshot["prices"].get("usd_per_gpu_hour")
    return None if rate is None else (snapshot["prices"]["as_of"], rate)


def _charts(spec, result, snapshot: dict) -> list[dict]:
    acc_id = snapshot["accelerator_meta"]["id"]
    history = selectors.gpu_price_history(accelerator_id=acc_id)
    figures = [
        ("chart-break-even", charts.break_even_figure(result)),
        ("chart-memory", charts.memory_figure(result)),
        ("chart-kv", charts.kv_figure(spec, result)),
        ("chart-utilisation", charts.utilisation_figure(spec, result)),
        (
            "chart-prices",
            charts.price_history_figure(
                result.accelerator_name,
                history,
                _picked_price(snapshot),
                timezone.localdate().isoformat(),
            ),
        ),
    ]
    return [{"id": chart_id, "figure": figure} for chart_id, figure in figures]


def _results_context(spec, result, snapshot: dict) -> dict:
    return {
        "result": result,
        "spec": spec,
        "snapshot": snapshot,
        "charts": _charts(spec, result, snapshot),
        "tier2_fitting": [m for m in result.tier2.models if m.fits],
    }


def _compute(form: BuilderForm) -> dict:
    """Validate and evaluate: the results context, or just the form with its errors."""
    if not form.is_valid():
        return {"result": None}
    inputs = services.scenario_inputs_from_form(form)
    try:
        result, snapshot = services.scenario_evaluate(inputs=inputs)
    except SizingError as error:
        form.add_sizing_error(error)
        return {"result": None}
    spec = services.scenario_spec_from_snapshot(snapshot)
    return {"inputs": inputs, **_results_context(spec, result, snapshot)}


def _as_form_data(values: dict) -> dict:
    return {k: "" if v is None else str(v) for k, v in values.items()}


@require_http_methods(["GET", "POST"])
def builder(request, scenario_id: int | None = None):
    scenario = None
    if scenario_id is not None:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        scenario = selectors.scenario_for_user(request.user, scenario_id, for_edit=True)
    if request.method == "POST":
        data = request.POST
    elif scenario is not None:
        data = {**builder_initial(), **_as_form_data(scenario.inputs)}
    else:
        # Query parameters preset fields: /scenarios/new/?llm=qwen3-32b is a shareable link.
        data = {**builder_initial(), **request.GET.dict()}
    form = BuilderForm(data, user=request.user)
    context = _compute(form)
    saving = request.method == "POST" and "save" in request.POST and not request.htmx
    if saving and not request.user.is_authenticated:
        return redirect_to_login(reverse("scenarios:builder"))
    save_form = None
    if request.user.is_authenticated:
        save_form = SaveForm(request.POST if saving else None, instance=scenario, user=request.user)
    if saving and context["result"] is not None and save_form.is_valid():
        saved = _save(request, scenario, context["inputs"], save_form)
        if saved is not None:
            return redirect("scenarios:detail", saved.pk)
    context["form"] = form
    if request.htmx and not saving:
        return render(request, "scenarios/builder.html#result", context)
    context.update(
        save_form=save_form,
        scenario=scenario,
        action_url=request.path,
        models=LLMModel.objects.only("name", "slug").order_by("name"),
        picked=_value(form, "llm"),
        accelerators=Accelerator.objects.only("name", "slug"),
        picked_accelerator=_value(form, "accelerator"),
        assumption_errors=any(form.has_error(name) for name in ASSUMPTION_FIELDS),
        **_form_price_options(form),
    )
    return render(request, "scenarios/builder.html", context)


def _save(request, scenario, inputs, save_form):
    meta = {name: save_form.cleaned_data[name] for name in services.META_FIELDS}
    try:
        if scenario is None:
            scenario = services.scenario_create(owner=request.user, inputs=inputs, **meta)
            messages.success(request, f"Saved “{scenario.name}”.")
        else:
            services.scenario_update(scenario=scenario, inputs=inputs, **meta)
            messages.success(request, f"Updated “{scenario.name}”.")
    except ValidationError as error:
        for field, errors in error.message_dict.items():
            save_form.add_error(field if field in save_form.fields else None, errors)
        return None
    return scenario


@require_GET
def model_options(request):
    """The model select's options matching a search, the current pick always kept."""
    q = request.GET.get("q", "").strip()
    picked = request.GET.get("llm", "")
    models = LLMModel.objects.only("name", "slug", "vendor").order_by("name")
    if q:
        found = [m for m in models if q.lower() in f"{m.name} {m.vendor} {m.slug}".lower()]
        models = [m for m in models if m in found or m.slug == picked]
    return render(
        request,
        "scenarios/builder.html#model-options",
        {"models": models, "picked": picked},
    )


@require_GET
def price_options(request):
    """Both price selects for a newly picked model or accelerator, swapped out of band; then
    the builder recomputes. A picked price that no longer applies moves to the cheapest one."""
    params = request.GET
    options = _price_options(
        llm_id=_id_of(LLMModel, params.get("llm", "")),
        accelerator_id=_id_of(Accelerator, params.get("accelerator", "")),
        gpu_value=params.get("gpu_price", ""),
        api_value=params.get("api_price", ""),
    )
    for key, rows in (("gpu_price_value", "gpu_prices"), ("api_price_value", "api_prices")):
        ids = [pk for pk, _ in options[rows]]
        if options[key] and options[key] not in ids:
            options[key] = ids[0] if ids else ""
    response = render(request, "scenarios/builder.html#price-selects", options)
    return trigger_client_event(response, "recompute", after="settle")


# ------------------------------------------------------------------ saved scenarios


def _saved_context(scenario) -> dict:
    result = services.scenario_reevaluate(
        scenario=scenario,
        accelerator_specs=services.catalog_accelerator_specs(),
        tier2_models=services.catalog_model_specs(exclude_slug=scenario.snapshot["model"]["slug"]),
    )
    spec = services.scenario_spec_from_snapshot(scenario.snapshot)
    return {
        "scenario": scenario,
        "price_changes": selectors.scenario_price_changes(scenario),
        "catalog_changes": selectors.scenario_catalog_changes(scenario),
        "can_edit": False,
        **_results_context(spec, result, scenario.snapshot),
    }


def detail(request, scenario_id: int):
    scenario = selectors.scenario_for_user(request.user, scenario_id)
    context = _saved_context(scenario)
    context["can_edit"] = scenario.owner_id == request.user.id
    return render(request, "scenarios/detail.html", context)


def print_view(request, scenario_id: int):
    scenario = selectors.scenario_for_user(request.user, scenario_id)
    context = _saved_context(scenario)
    context["printed"] = timezone.now()
    return render(request, "scenarios/print.html", context)


@login_required
@require_POST
def clone(request, scenario_id: int):
    scenario = selectors.scenario_for_user(request.user, scenario_id)
    copy = services.scenario_clone(scenario=scenario, owner=request.user)
    messages.success(request, f"Cloned into “{copy.name}”, private to you.")
    return redirect("scenarios:detail", copy.pk)


@login_required
@require_http_methods(["GET", "POST"])
def delete(request, scenario_id: int):
    scenario = selectors.scenario_for_user(request.user, scenario_id, for_edit=True)
    if request.method == "POST":
        name = scenario.name
        services.scenario_delete(scenario=scenario)
        messages.success(request, f"Deleted “{name}”.")
        return redirect("scenarios:library")
    return render(request, "scenarios/delete.html", {"scenario": scenario})


def export(request, scenario_id: int, fmt: str):
    scenario = selectors.scenario_for_user(request.user, scenario_id)
    result = services.scenario_reevaluate(scenario=scenario)
    filename = f"scenario-{scenario.pk}"
    if fmt == "json":
        return _attachment(
            JsonResponse(exports.scenario_data(scenario, result), json_dumps_params={"indent": 2}),
            f"{filename}.json",
        )
    return _attachment(
        HttpResponse(exports.scenario_csv(scenario, result), content_type="text/csv"),
        f"{filename}.csv",
    )


def _attachment(response: HttpResponse, filename: str) -> HttpResponse:
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# ------------------------------------------------------------------ library and compare


def library(request):
    params = request.GET
    team = params.get("team", "")
    filters = {
        "q": params.get("q", "").strip(),
        "model": params.get("model", ""),
        "accelerator": params.get("accelerator", ""),
        "tag": params.get("tag", "").strip().lstrip("#"),
        "team": int(team) if team.isdigit() else None,
        "mine": params.get("mine") == "1",
    }
    page = selectors.scenarios_page(
        request.user, page=params.get("page"), per_page=LIBRARY_PAGE_SIZE, **filters
    )
    query = params.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "filters": filters,
        "query": query.urlencode(),
        "models": LLMModel.objects.only("name", "slug").order_by("name"),
        "accelerators": Accelerator.objects.only("name", "slug").order_by("name"),
        "teams": (
            Team.objects.filter(memberships__user=request.user)
            if request.user.is_authenticated
            else Team.objects.none()
        ),
    }
    if request.htmx:
        return render(request, "scenarios/library.html#rows", context)
    return render(request, "scenarios/library.html", context)


def _compared(request):
    ids = selectors.parse_ids(request.GET.getlist("ids"))
    scenarios = selectors.scenarios_compare(request.user, ids)
    results = [services.scenario_reevaluate(scenario=s) for s in scenarios]
    return scenarios, results


def compare(request):
    try:
        scenarios, results = _compared(request)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("scenarios:library")
    figure = charts.compare_break_even_figure(
        [(s.name, r) for s, r in zip(scenarios, results, strict=True)]
    )
    context = {
        "scenarios": scenarios,
        "columns": list(zip(scenarios, results, strict=True)),
        "rows": exports.comparison_rows(results),
        "chart": figure,
        "ids": ",".join(str(s.pk) for s in scenarios),
    }
    return render(request, "scenarios/compare.html", context)


def compare_export(request, fmt: str):
    try:
        scenarios, results = _compared(request)
    except ValidationError as error:
        return JsonResponse({"detail": " ".join(error.messages)}, status=400)
    if fmt == "json":
        data = {
            "scenarios": [
                exports.scenario_data(s, r) for s, r in zip(scenarios, results, strict=True)
            ],
            "best": {
                row.figure.key: [s.pk for s, c in zip(scenarios, row.cells, strict=True) if c.best]
                for row in exports.comparison_rows(results)
                if row.figure.better
            },
        }
        return _attachment(
            HttpResponse(json.dumps(data, indent=2), content_type="application/json"),
            "comparison.json",
        )
    return _attachment(
        HttpResponse(exports.comparison_csv(scenarios, results), content_type="text/csv"),
        "comparison.csv",
    )
