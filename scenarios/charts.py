"""Plotly figures as plain data, built from engine results. No Django here.

Each function returns a {"data": [...], "layout": {...}} dict that the template embeds with
`json_script` and static/js/charts.js draws. Units are in the axis titles; money is USD.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import replace

from sizing.engine.evaluate import ScenarioResult, break_even_series_for
from sizing.engine.fmt import GIB, fmt_tokens, fmt_usd
from sizing.engine.kv import kv_estimate
from sizing.engine.specs import Scenario

# Colours readable on white and in greyscale print, in the order series are added.
PALETTE = ("#1f5fbf", "#d9730d", "#1c7c3c", "#8e3fbf", "#b42318", "#4b5563")
API_COLOUR, SELFHOST_COLOUR = "#d9730d", "#1f5fbf"
# Beyond this many replica steps the self-hosted line is drawn from sampled points.
MAX_STEPS_DRAWN = 200
# Contexts for "KV cache against context": 1k to 1M tokens (2^10..2^20), the article's range.
KV_CONTEXTS = tuple(2**i for i in range(10, 21))
UTILISATIONS = tuple(round(0.05 * i, 2) for i in range(1, 21))
NOTE_WIDTH = 60  # characters a line in a chart's "nothing to draw" note


def _layout(title: str, x_title: str, y_title: str, **extra) -> dict:
    layout = {
        "title": {"text": title, "font": {"size": 15}},
        "xaxis": {"title": {"text": x_title}, "zeroline": False, "automargin": True},
        "yaxis": {
            "title": {"text": y_title},
            "zeroline": False,
            "rangemode": "tozero",
            "automargin": True,
        },
        "margin": {"l": 64, "r": 16, "t": 40, "b": 40},
        "legend": {"orientation": "h", "y": -0.3, "yanchor": "top"},
        "hovermode": "closest",
        "height": 380,
        "font": {"family": "system-ui, sans-serif", "size": 12},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(layout.get(key), dict):
            layout[key] = {**layout[key], **value}
        else:
            layout[key] = value
    return layout


def _note(text: str) -> dict:
    """An empty chart that says why there is nothing to draw."""
    text = "<br>".join(textwrap.wrap(text, NOTE_WIDTH))  # Plotly does not wrap annotations
    return {
        "data": [],
        "layout": {
            "height": 160,
            "margin": {"l": 16, "r": 16, "t": 16, "b": 16},
            "xaxis": {"visible": False},
            "yaxis": {"visible": False},
            "annotations": [
                {"text": text, "showarrow": False, "xref": "paper", "yref": "paper",
                 "x": 0.5, "y": 0.5, "font": {"size": 13, "color": "#5b6675"}}
            ],
        },
    }  # fmt: skip


def _steps(
    usd_per_replica: float, capacity: float | None, x_max: float
) -> tuple[list[float], list[float]]:
    """The self-hosted monthly cost as an 'hv' step line: one more replica per capacity."""
    if capacity is None or capacity <= 0:
        return [0.0, x_max], [usd_per_replica, usd_per_replica]
    steps = math.ceil(x_max / capacity)
    if steps > MAX_STEPS_DRAWN:
        xs = [x_max * i / 400 for i in range(401)]
        return xs, [max(1, math.ceil(x / capacity)) * usd_per_replica for x in xs]
    xs, ys = [0.0], [usd_per_replica]
    for k in range(1, steps):
        xs.append(k * capacity)
        ys.append((k + 1) * usd_per_replica)
    xs.append(x_max)
    ys.append(steps * usd_per_replica)
    return xs, ys


def _token_unit(x_max: float) -> tuple[float, str, str]:
    """Billions past 2e9 tokens, else millions: axis ticks read "5", not "5k" of millions."""
    return (1e9, "billions", "B") if x_max >= 2e9 else (1e6, "millions", "M")


def _break_even_traces(result: ScenarioResult, label: str, colour: str | None, x_max: float):
    be = result.break_even
    assert be is not None
    m, g = be.selfhost_usd_per_replica_month, be.gateway_usd_per_month
    a, c = be.api_usd_per_m_output, be.replica_output_tokens_per_month
    xs, ys = _steps(m, c, x_max)
    series = break_even_series_for(result, points=2, max_output_tokens=x_max)
    assert series is not None
    scale, _, unit = _token_unit(x_max)
    prefix = f"{label}: " if label else ""
    hover = "%{x:,.2f} " + unit + " tokens: $%{y:,.0f} a month<extra>"
    traces = [
        {
            "type": "scatter", "mode": "lines", "name": f"{prefix}API ({fmt_usd(a)} per M output)",
            "x": [0, x_max / scale], "y": [g, g + a * x_max / 1e6],
            "line": {"color": colour or API_COLOUR, "dash": "dash" if colour else "solid"},
            "hovertemplate": hover + "API</extra>",
        },
        {
            "type": "scatter", "mode": "lines",
            "line": {"shape": "hv", "color": colour or SELFHOST_COLOUR},
            "name": f"{prefix}rent {result.layout.gpus} GPUs a replica ({fmt_usd(m)} a month each)",
            "x": [x / scale for x in xs], "y": ys,
            "hovertemplate": hover + "rent</extra>",
        },
    ]  # fmt: skip
    if series.crossings:
        traces.append(
            {
                "type": "scatter", "mode": "markers+text", "name": f"{prefix}break-even",
                "x": [v / scale for v in series.crossings],
                "y": [g + a * v / 1e6 for v in series.crossings],
                # label the first crossing only: the later ones sit a replica step apart
                "text": [
                    f"{fmt_tokens(v)} tokens/month" if i == 0 else ""
                    for i, v in enumerate(series.crossings)
                ],
                "textposition": "bottom right",
                "marker": {"size": 11, "symbol": "diamond", "color": colour or "#b42318"},
                "hovertemplate": "break-even at %{x:,.2f} " + unit + " tokens: $%{y:,.0f}"
                                 "<extra></extra>",
            }
        )  # fmt: skip
    return traces


def _x_max(result: ScenarioResult) -> float:
    # The engine's default range: the crossing and a couple of replica steps after it.
    series = break_even_series_for(result, points=2)
    assert series is not None
    return series.points[-1][0]


def break_even_figure(result: ScenarioResult) -> dict:
    """Monthly cost against monthly output tokens: the API line, the stepped rent line."""
    if result.break_even is None:
        return _note(result.verdicts.break_even)
    x_max = _x_max(result)
    return {
        "data": _break_even_traces(result, "", None, x_max),
        "layout": _layout(
            "Break-even: renting against the API",
            f"Output tokens a month ({_token_unit(x_max)[1]})",
            "Cost a month (USD)",
            yaxis={"tickprefix": "$", "separatethousands": True},
        ),
    }


def compare_break_even_figure(results: Sequence[tuple[str, ScenarioResult]]) -> dict:
    """Every compared scenario's API and rent lines on one chart."""
    drawable = [(name, r) for name, r in results if r.break_even is not None]
    if not drawable:
        return _note("None of these scenarios has both a GPU-hour price and an API price.")
    x_max = max(_x_max(r) for _, r in drawable)
    data = []
    for i, (name, r) in enumerate(drawable):
        data.extend(_break_even_traces(r, name, PALETTE[i % len(PALETTE)], x_max))
    return {
        "data": data,
        "layout": _layout(
            "Break-even, side by side",
            f"Output tokens a month ({_token_unit(x_max)[1]})",
            "Cost a month (USD)",
            yaxis={"tickprefix": "$", "separatethousands": True},
            height=460,
        ),
    }


def memory_figure(result: ScenarioResult) -> dict:
    """One GPU of the recommended layout: weights / KV / activations / overhead / free."""
    layout, kv = result.layout, result.kv
    split = layout.per_gpu
    if split is None:
        return _note(f"No layout fits: {layout.reason}.")
    kv_name = "KV cache" if layout.kv_included else "KV cache (unknown, not counted)"
    parts = [
        ("Weights", split.weights_gb, "#1f5fbf"),
        (kv_name, split.kv_gb, "#8e3fbf"),
        ("Activations", split.activations_gb, "#d9730d"),
        ("Runtime overhead", split.overhead_gb, "#4b5563"),
        ("Free", max(0.0, split.free_gb), "#c9d3df"),
    ]
    label = f"1 of {layout.gpus} × {result.accelerator_name}"
    data = [
        {
            "type": "bar", "orientation": "h", "name": name, "y": [label], "x": [round(gb, 3)],
            "marker": {"color": colour},
            "hovertemplate": f"{name}: %{{x:,.1f}} GB<extra></extra>",
        }
        for name, gb, colour in parts
    ]  # fmt: skip
    fig_layout = _layout(
        "Memory per GPU (GB, decimal)",
        "",
        "",
        barmode="stack",
        height=260,
        yaxis={"showticklabels": False},
        legend={"orientation": "h", "y": -0.45, "traceorder": "normal"},
        shapes=[
            {"type": "line", "x0": split.cap_gb, "x1": split.cap_gb, "yref": "paper",
             "y0": 0, "y1": 1, "line": {"color": "#b42318", "dash": "dot"}}
        ],
        annotations=[
            {"x": split.cap_gb, "yref": "paper", "y": 1.02, "showarrow": False,
             "text": f"cap {split.cap_gb:,.0f} GB", "font": {"color": "#b42318", "size": 11}}
        ],
    )  # fmt: skip
    if not kv.known:
        fig_layout["title"]["text"] += ", KV unknown"
    return {"data": data, "layout": fig_layout}


def kv_figure(scenario: Scenario, result: ScenarioResult) -> dict:
    """KV cache (and fixed state) against context, for the workload's concurrency."""
    kv = result.kv
    if not kv.known:
        return _note(f"KV cache per token unknown for {scenario.model.name}. {kv.how_to_measure}")
    wl = scenario.workload
    limit = scenario.model.max_context_tokens
    contexts = sorted({c for c in KV_CONTEXTS if limit is None or c <= limit} | {wl.context_tokens})
    totals, per_user = [], []
    for c in contexts:
        est = kv_estimate(scenario.model, replace(wl, context_tokens=c))
        totals.append((est.kv_bytes_total or 0.0) / GIB)
        per_user.append((est.kv_bytes_per_user or 0.0) / GIB)
    users = wl.concurrency
    data = [
        {"type": "scatter", "mode": "lines+markers", "name": f"{users} users",
         "x": contexts, "y": totals, "line": {"color": "#8e3fbf"},
         "hovertemplate": "%{x:,} tokens: %{y:,.2f} GiB<extra>" + f"{users} users</extra>"},
        {"type": "scatter", "mode": "lines", "name": "one user",
         "x": contexts, "y": per_user, "line": {"color": "#8e3fbf", "dash": "dot"},
         "hovertemplate": "%{x:,} tokens: %{y:,.2f} GiB<extra>one user</extra>"},
    ]  # fmt: skip
    chosen = contexts.index(wl.context_tokens)
    data.append(
        {"type": "scatter", "mode": "markers", "name": "this scenario",
         "x": [wl.context_tokens], "y": [totals[chosen]],
         "marker": {"size": 11, "color": "#b42318"},
         "hovertemplate": "this scenario: %{y:,.2f} GiB<extra></extra>"}
    )  # fmt: skip
    return {
        "data": data,
        "layout": _layout(
            f"KV cache against context ({kv.kv_dtype})",
            "Context (tokens, log scale)",
            "KV cache (GiB)",
            xaxis={"type": "log", "dtick": math.log10(4), "tickformat": ",d"},
        ),
    }


def utilisation_figure(scenario: Scenario, result: ScenarioResult) -> dict:
    """Renting's cost per million output tokens as the cluster gets busier, against the API."""
    t1 = result.tier1
    if t1 is None or t1.usd_per_month is None or result.decode_tokens_per_s is None:
        return _note("Needs a layout that fits, a GPU-hour price and a known decode speed.")
    wl = scenario.workload
    seconds = wl.hours_per_day * wl.days_per_month * 3600
    tokens_per_s = result.decode_tokens_per_s
    costs = [t1.usd_per_month / (tokens_per_s * u * seconds / 1e6) for u in UTILISATIONS]
    data = [
        {"type": "scatter", "mode": "lines", "name": "rent the cluster",
         "x": [u * 100 for u in UTILISATIONS], "y": costs, "line": {"color": SELFHOST_COLOUR},
         "hovertemplate": "%{x:.0f}% busy: $%{y:,.2f} per M<extra>rent</extra>"},
        {"type": "scatter", "mode": "markers", "name": "this scenario",
         "x": [wl.utilisation * 100], "y": [t1.usd_per_m_output],
         "marker": {"size": 11, "color": "#b42318"},
         "hovertemplate": "this scenario: $%{y:,.2f} per M<extra></extra>"},
    ]  # fmt: skip
    api = scenario.prices.api_usd_per_m_output
    if result.break_even is not None:
        api = result.break_even.api_usd_per_m_output
    if api is not None:
        data.append(
            {"type": "scatter", "mode": "lines", "name": f"API ({fmt_usd(api)} per M output)",
             "x": [5, 100], "y": [api, api], "line": {"color": API_COLOUR, "dash": "dash"},
             "hovertemplate": "API: $%{y:,.2f} per M<extra></extra>"}
        )  # fmt: skip
    return {
        "data": data,
        "layout": _layout(
            "Cost per million output tokens against utilisation",
            "Utilisation (% of peak decode throughput)",
            "USD per million output tokens",
            # linear, cut at 4x the dearer of the API and full load: the 5% end runs off
            yaxis={"tickprefix": "$", "range": [0, 4 * max(api or 0.0, costs[-1])]},
            xaxis={"range": [0, 102]},
        ),
    }


def price_history_figure(
    accelerator_name: str,
    rows: Sequence[tuple[str, str, float]],
    picked: tuple[str, float] | None,
    today: str,
) -> dict:
    """GPU-hour prices over time for one accelerator, one step line per offer, each drawn on
    to `today` (ISO date) at its newest price.

    `rows` are (series label, ISO date, USD per GPU-hour), oldest first; `picked` is the
    scenario's own price (ISO date, USD) when it came from a dated row or was typed.
    """
    if not rows:
        return _note(f"No dated prices for the {accelerator_name} yet.")
    by_series: dict[str, tuple[list[str], list[float], list[int]]] = {}
    for label, day, usd in rows:
        xs, ys, sizes = by_series.setdefault(label, ([], [], []))
        xs.append(day)
        ys.append(usd)
        sizes.append(7)
    for xs, ys, sizes in by_series.values():
        if xs[-1] < today:  # still the price today: no marker, it is not a new row
            xs.append(today)
            ys.append(ys[-1])
            sizes.append(0)
    data = [
        {"type": "scatter", "mode": "lines+markers", "name": label, "x": xs, "y": ys,
         "marker": {"size": sizes},
         "line": {"shape": "hv", "color": PALETTE[i % len(PALETTE)]},
         "hovertemplate": "%{x}: $%{y:,.2f} per GPU-hour<extra>" + label + "</extra>"}
        for i, (label, (xs, ys, sizes)) in enumerate(sorted(by_series.items()))
    ]  # fmt: skip
    if picked is not None:
        data.append(
            {"type": "scatter", "mode": "markers", "name": "this scenario",
             "x": [picked[0]], "y": [picked[1]],
             "marker": {"size": 12, "symbol": "star", "color": "#b42318"},
             "hovertemplate": "this scenario: $%{y:,.2f}<extra></extra>"}
        )  # fmt: skip
    return {
        "data": data,
        "layout": _layout(
            f"GPU-hour prices for the {accelerator_name}",
            "Effective date",
            "USD per GPU-hour",
            xaxis={"type": "date"},
            yaxis={"tickprefix": "$"},
        ),
    }
