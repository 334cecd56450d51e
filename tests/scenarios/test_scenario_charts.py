"""The Plotly figures as data: the break-even steps and crossing, memory, KV, utilisation."""

import pytest
from scenario_data import form_data

from scenarios import charts, services

pytestmark = pytest.mark.django_db


def evaluated(**changes):
    inputs = services.scenario_inputs_from_dict(form_data(**changes))
    result, snapshot = services.scenario_evaluate(inputs=inputs)
    return services.scenario_spec_from_snapshot(snapshot), result


def traces(figure) -> dict:
    return {t["name"].split(" (")[0]: t for t in figure["data"]}


def test_the_article_break_even_8_gpus_against_15_dollars(catalog):
    # 8 GPUs always on at $2.50 = $14,400 a month = 960 M output tokens at $15.00 per M.
    _, result = evaluated(llm="qwen3-235b-a22b")
    assert result.layout.gpus == 8 and result.tier1_usd_per_month == 14_400
    fig = charts.break_even_figure(result)
    t = traces(fig)
    assert t["break-even"]["x"][0] == pytest.approx(0.96)  # billions: 3 replicas drawn
    assert t["break-even"]["y"][0] == pytest.approx(14_400)
    assert t["break-even"]["text"][0] == "960 M tokens/month"
    assert fig["layout"]["xaxis"]["title"]["text"] == "Output tokens a month (billions)"


def test_the_rent_line_steps_one_replica_at_a_time(catalog):
    _, result = evaluated()
    rent = traces(charts.break_even_figure(result))["rent 32 GPUs a replica"]
    capacity = result.break_even.replica_output_tokens_per_month / 1e9  # billions on this axis
    assert rent["line"]["shape"] == "hv"
    assert rent["y"][:3] == [57_600, 115_200, 172_800]
    assert rent["x"][1] == pytest.approx(capacity) and rent["x"][2] == pytest.approx(2 * capacity)


def test_steps_without_a_known_capacity_are_flat():
    assert charts._steps(100.0, None, 5e9) == ([0.0, 5e9], [100.0, 100.0])


def test_no_break_even_without_prices(catalog):
    _, result = evaluated(usd_per_gpu_hour="")
    fig = charts.break_even_figure(result)
    assert fig["data"] == [] and "GPU-hour price" in fig["layout"]["annotations"][0]["text"]


def test_memory_stack_adds_up_to_the_card(catalog):
    _, result = evaluated()
    fig = charts.memory_figure(result)
    total = sum(t["x"][0] for t in fig["data"])
    assert total == pytest.approx(80, abs=0.01)
    assert [t["name"] for t in fig["data"]][1] == "KV cache (unknown, not counted)"
    assert fig["layout"]["shapes"][0]["x0"] == pytest.approx(72)  # 90 % of 80 GB


def test_kv_unknown_says_how_to_measure(catalog):
    spec, result = evaluated()
    text = charts.kv_figure(spec, result)["layout"]["annotations"][0]["text"]
    assert "unknown" in text and "nvidia-smi" in text


def test_kv_against_context_for_a_known_model(catalog):
    spec, result = evaluated(llm="llama-3.1-8b", concurrency=4)
    fig = charts.kv_figure(spec, result)
    users = fig["data"][0]
    assert users["x"][0] == 1024 and users["x"][-1] == 131_072  # capped at the model's max
    # Llama 3.1 8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 128 KiB a token
    assert users["y"][users["x"].index(8192)] == pytest.approx(4 * 8192 * 131_072 / 2**30)


def test_cost_per_million_falls_as_the_cluster_gets_busy(catalog):
    spec, result = evaluated()
    fig = charts.utilisation_figure(spec, result)
    rent = fig["data"][0]["y"]
    assert rent == sorted(rent, reverse=True)
    assert rent[-1] == pytest.approx(result.tier1.usd_per_m_output)  # at 100 %
    assert fig["data"][2]["y"] == [15.0, 15.0]  # the API's output price


def test_price_history_steps_on_to_today():
    rows = [("Lambda on-demand", "2026-03-01", 3.29), ("Lambda on-demand", "2026-07-20", 2.99)]
    fig = charts.price_history_figure("H100 80GB", rows, ("2026-07-20", 2.99), "2026-11-29")
    line = fig["data"][0]
    assert line["x"] == ["2026-03-01", "2026-07-20", "2026-11-29"]
    assert line["y"] == [3.29, 2.99, 2.99] and line["marker"]["size"] == [7, 7, 0]
    assert fig["data"][1]["name"] == "this scenario"


def test_no_price_history_is_said():
    fig = charts.price_history_figure("H100 80GB", [], None, "2026-11-29")
    assert "No dated prices" in fig["layout"]["annotations"][0]["text"]
