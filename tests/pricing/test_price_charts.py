"""History charts are data: step lines of each provider's cheapest current offer."""

import datetime as dt
from decimal import Decimal

import pytest

from pricing.charts import price_history_figure, price_steps
from pricing.templatetags.prices import usd

D = dt.date
TODAY = D(2026, 9, 30)


def test_a_provider_line_steps_at_each_change_and_reaches_today():
    rows = [
        ("Acme", D(2026, 7, 1), D(2026, 8, 1), Decimal("3.00")),
        ("Acme", D(2026, 8, 1), None, Decimal("2.50")),
    ]

    assert price_steps(rows, today=TODAY) == {
        "Acme": (["2026-07-01", "2026-08-01", "2026-09-30"], [3.0, 2.5, 2.5])
    }


def test_a_line_is_the_cheapest_of_the_offers_current_on_each_date():
    rows = [
        ("Acme", D(2026, 7, 1), None, Decimal("3.00")),  # 8-GPU offer, unchanged
        ("Acme", D(2026, 7, 15), D(2026, 8, 15), Decimal("2.00")),  # a 1-GPU offer, withdrawn
        ("Acme", D(2026, 8, 15), None, Decimal("2.40")),
    ]

    xs, ys = price_steps(rows, today=TODAY)["Acme"]

    assert list(zip(xs, ys, strict=True)) == [
        ("2026-07-01", 3.0),
        ("2026-07-15", 2.0),
        ("2026-08-15", 2.4),
        ("2026-09-30", 2.4),
    ]


def test_a_gap_breaks_the_line_instead_of_joining_across_it():
    rows = [
        ("Bolt", D(2026, 7, 1), D(2026, 7, 10), Decimal("1.90")),
        ("Bolt", D(2026, 7, 20), None, Decimal("2.10")),
    ]

    xs, ys = price_steps(rows, today=TODAY)["Bolt"]

    assert ys == [1.9, None, 2.1, 2.1]
    assert xs[1] == "2026-07-10"


def test_a_price_from_after_today_is_left_out():
    rows = [
        ("Acme", D(2026, 7, 1), D(2026, 10, 1), Decimal("3.00")),
        ("Acme", D(2026, 10, 1), None, Decimal("2.00")),
    ]

    assert price_steps(rows, today=TODAY)["Acme"][1] == [3.0, 3.0]


def test_the_figure_is_plain_data_for_plotly():
    figure = price_history_figure(
        title="H100 80GB", rows=[("Acme", D(2026, 7, 1), None, Decimal("2.5"))], today=TODAY
    )

    [trace] = figure["data"]
    assert (trace["name"], trace["line"], trace["y"]) == ("Acme", {"shape": "hv"}, [2.5, 2.5])
    assert figure["layout"]["yaxis"]["title"]["text"] == "USD per GPU-hour"
    assert price_history_figure(title="x", rows=[], today=TODAY)["data"] == []


@pytest.mark.parametrize(
    "value, shown",
    [
        (Decimal("2.5"), "2.50"),
        (Decimal("15.000000"), "15.00"),
        (Decimal("2.744705"), "2.744705"),
        (Decimal("0.003625"), "0.003625"),
        (Decimal("1234.5"), "1,234.50"),
        (None, ""),
    ],
)
def test_prices_show_cents_and_every_digit_the_feed_gave(value, shown):
    assert usd(value) == shown
