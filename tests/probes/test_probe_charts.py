"""The charts are plain data: one trace per outcome, the estimate as a level line."""

from datetime import UTC, datetime, timedelta

from probes import charts

T0 = datetime(2026, 7, 20, 12, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_latency_has_one_trace_per_outcome_in_a_fixed_order():
    points = [
        charts.Point(at(0), "up", latency_ms=12.5),
        charts.Point(at(1), "down"),
        charts.Point(at(2), "up", latency_ms=14.0),
    ]

    figure = charts.latency_figure(points)

    assert [t["name"] for t in figure["data"]] == ["up", "down"]
    assert figure["data"][0]["y"] == [12.5, 14.0]
    assert figure["data"][1]["y"] == [0]  # an outage sits on the axis
    assert figure["data"][0]["x"][0] == "2026-07-20T12:00:00+00:00"


def test_status_history_is_a_strip_of_categories():
    figure = charts.status_figure([charts.Point(at(0), "auth_error")])

    assert figure["data"][0]["y"] == ["auth error"]
    assert figure["layout"]["yaxis"]["type"] == "category"


def test_speed_shows_measured_and_estimated():
    points = [
        charts.Point(at(0), "up", tokens_per_s=40.0, estimated_tokens_per_s=50.0),
        charts.Point(at(60), "up", tokens_per_s=42.0, estimated_tokens_per_s=50.0),
        charts.Point(at(120), "timeout"),
    ]

    figure = charts.speed_figure(points, estimate_tokens_per_s=50.0)

    assert [t["name"] for t in figure["data"]] == ["measured", "estimated at the time"]
    assert figure["data"][0]["y"] == [40.0, 42.0]
    assert figure["layout"]["shapes"][0]["y0"] == 50.0


def test_without_an_estimate_there_is_no_line():
    figure = charts.speed_figure([], estimate_tokens_per_s=None)

    assert figure["layout"]["shapes"] == []
    assert figure["data"][0]["x"] == []
