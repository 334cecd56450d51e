"""A scenario as CSV and JSON: raw numbers, units, verdicts, inputs and the snapshot."""

import csv
import io
import json

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_csv_has_one_figure_a_row(client, alice, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(alice)
    r = client.get(reverse("scenarios:export", args=[scenario.pk, "csv"]))
    assert r["Content-Type"].startswith("text/csv")
    assert f'filename="scenario-{scenario.pk}.csv"' in r["Content-Disposition"]
    rows = {row[0]: row[1:] for row in csv.reader(io.StringIO(r.content.decode()))}
    assert rows["figure"] == ["value", "unit"]
    assert rows["gpus"] == ["32", "GPUs"]
    assert float(rows["tier1_usd_per_month"][0]) == 57_600
    assert float(rows["weights_bytes"][0]) == pytest.approx(1.4875e12)
    assert rows["min_gpus_for_weights"][0] == "19"
    assert rows["verdict_single_gpu"][0].startswith("Kimi K3 cannot run on one GPU")


def test_json_carries_inputs_snapshot_and_figures(client, alice, make_scenario):
    scenario = make_scenario(alice, tags="k3")
    client.force_login(alice)
    r = client.get(reverse("scenarios:export", args=[scenario.pk, "json"]))
    data = json.loads(r.content)
    assert data["name"] == "K3 on H100" and data["tags"] == ["k3"]
    assert data["figures"]["tier1_usd_per_month"] == 57_600
    assert data["figures"]["cold_start_s"] == pytest.approx(1487.5)  # 1.4875 TB at 1 GB/s
    assert data["inputs"]["llm"] == "kimi-k3"
    assert data["snapshot"]["prices"]["usd_per_gpu_hour"] == 2.5
    assert "--tp-size 8 --ep-size 4" in data["launch"]["sglang"]


def test_an_unknown_format_is_404(client, alice, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(alice)
    assert client.get(f"/scenarios/{scenario.pk}/export.xml").status_code == 404
