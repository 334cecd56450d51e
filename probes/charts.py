"""Plotly figures for an endpoint's history, as plain data (no Django, no plotly import).

The template embeds each with `json_script`; static/js/charts.js draws them with plotly.js.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

# One colour per outcome, the same on every chart and in the CSS badges.
STATUS_COLOURS = {
    "up": "#1c7c3c",
    "loading": "#b7791f",
    "down": "#b42318",
    "auth_error": "#7a3db8",
    "model_missing": "#c2410c",
    "timeout": "#6b7280",
    "bad_response": "#9f1239",
}
STATUS_ORDER = list(STATUS_COLOURS)


@dataclass(frozen=True)
class Point:
    at: datetime
    status: str
    latency_ms: float | None = None
    tokens_per_s: float | None = None
    estimated_tokens_per_s: float | None = None


Window = tuple[datetime, datetime]


def _layout(title: str, y_title: str, window: Window | None = None, **extra) -> dict:
    xaxis: dict = {"type": "date", "title": {"text": "time (UTC)"}}
    if window is not None:
        # The whole window, so a single probe is a point in a week, not a week of one point.
        xaxis["range"] = [window[0].isoformat(), window[1].isoformat()]
    return {
        "title": {"text": title},
        "xaxis": xaxis,
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
        "legend": {"orientation": "h"},
        "height": 320,
        **extra,
    }


def latency_figure(points: Sequence[Point], window: Window | None = None) -> dict:
    """GET /v1/models latency over time, one trace per outcome so colours say the status."""
    traces = []
    for status in STATUS_ORDER:
        mine = [p for p in points if p.status == status]
        if not mine:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "markers" if status != "up" else "lines+markers",
                "name": status.replace("_", " "),
                "x": [p.at.isoformat() for p in mine],
                # A failed probe has no latency: plot it on the axis so the outage shows.
                "y": [p.latency_ms if p.latency_ms is not None else 0 for p in mine],
                "marker": {"color": STATUS_COLOURS[status]},
                "line": {"color": STATUS_COLOURS[status]},
            }
        )
    return {"data": traces, "layout": _layout("Latency of GET /v1/models", "ms", window)}


def status_figure(points: Sequence[Point], window: Window | None = None) -> dict:
    """The status of every probe over time: a strip of coloured marks, one row per outcome."""
    traces = []
    for status in STATUS_ORDER:
        mine = [p for p in points if p.status == status]
        if not mine:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": status.replace("_", " "),
                "x": [p.at.isoformat() for p in mine],
                "y": [status.replace("_", " ")] * len(mine),
                "marker": {"color": STATUS_COLOURS[status], "symbol": "line-ns-open", "size": 14},
            }
        )
    layout = _layout("Status history", "", window)
    layout["yaxis"] = {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": [s.replace("_", " ") for s in reversed(STATUS_ORDER)],
        # Every outcome keeps its row, whether or not it happened in the window.
        "range": [-0.5, len(STATUS_ORDER) - 0.5],
    }
    layout["height"] = 260
    layout["margin"] = {**layout["margin"], "l": 110}  # room for "model missing"
    layout["showlegend"] = False
    return {"data": traces, "layout": layout}


def speed_figure(
    points: Sequence[Point],
    window: Window | None = None,
    *,
    estimate_tokens_per_s: float | None = None,
) -> dict:
    """Measured decode tokens/s over time, with the engine's estimate when there is one."""
    measured = [p for p in points if p.tokens_per_s is not None]
    traces = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "measured",
            "x": [p.at.isoformat() for p in measured],
            "y": [p.tokens_per_s for p in measured],
            "marker": {"color": STATUS_COLOURS["up"]},
        }
    ]
    # The estimate as it stood at each probe (it moves when the catalog changes) ...
    estimated = [p for p in measured if p.estimated_tokens_per_s is not None]
    if estimated:
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "estimated at the time",
                "x": [p.at.isoformat() for p in estimated],
                "y": [p.estimated_tokens_per_s for p in estimated],
                "line": {"dash": "dot", "color": "#1f5fbf"},
            }
        )
    # ... and today's estimate as a level line across the chart.
    shapes = []
    if estimate_tokens_per_s is not None:
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": estimate_tokens_per_s,
                "y1": estimate_tokens_per_s,
                "line": {"dash": "dash", "color": "#1f5fbf", "width": 1},
            }
        )
    return {
        "data": traces,
        "layout": _layout(
            "Output tokens/s, measured vs estimated", "tokens/s", window, shapes=shapes
        ),
    }
