"""Plotly figures as plain dicts, from price rows. Pure: no Django, no plotly import.

The template embeds a figure with json_script; static/js/charts.js draws it.
"""

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal

# One price row: (trace label, effective_date, valid_until or None, price).
Row = tuple[str, dt.date, dt.date | None, Decimal | float]


def price_steps(rows: Iterable[Row], *, today: dt.date) -> dict[str, tuple[list[str], list]]:
    """label -> (dates, prices): the label's cheapest current price at each date it changed.

    A label (a provider) has several offers at once; its line is the lowest of those current on
    each date, a step that holds until the next change. None breaks the line where the label
    had no current price. The last point repeats today's value so the step reaches today.
    """
    by_label: dict[str, list[tuple[dt.date, dt.date | None, float]]] = defaultdict(list)
    for label, start, end, price in rows:
        if start <= today:
            by_label[label].append((start, end, float(price)))
    steps = {}
    for label, intervals in sorted(by_label.items()):
        dates = sorted(
            {start for start, _, _ in intervals}
            | {end for _, end, _ in intervals if end is not None and end <= today}
        )
        xs, ys = [], []
        for day in dates:
            xs.append(day.isoformat())
            ys.append(_lowest_on(intervals, day))
        if dates[-1] < today:
            xs.append(today.isoformat())
            ys.append(_lowest_on(intervals, today))
        steps[label] = (xs, ys)
    return steps


def _lowest_on(intervals, day: dt.date) -> float | None:
    prices = [p for start, end, p in intervals if start <= day and (end is None or end > day)]
    return min(prices) if prices else None


def price_history_figure(
    *, title: str, rows: Iterable[Row], today: dt.date, unit: str = "USD per GPU-hour"
) -> dict:
    """One step line per label (provider): its cheapest offer over time."""
    traces = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": label,
            "x": xs,
            "y": ys,
            "line": {"shape": "hv"},
            "connectgaps": False,
            "hovertemplate": f"%{{y:$.2f}} from %{{x}}<extra>{label}</extra>",
        }
        for label, (xs, ys) in price_steps(rows, today=today).items()
    ]
    return {
        "data": traces,
        "layout": {
            "title": {"text": title},
            "height": 320,
            "margin": {"l": 60, "r": 20, "t": 40, "b": 40},
            "xaxis": {"title": {"text": "Effective date"}, "type": "date"},
            "yaxis": {"title": {"text": unit}, "rangemode": "tozero"},
            "legend": {"orientation": "h", "y": -0.25},
        },
        "config": {"displaylogo": False, "responsive": True},
    }
