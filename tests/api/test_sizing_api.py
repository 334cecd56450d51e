"""Sizing over JSON reproduces the article's figures; bad input is a 422 naming the field."""

import pytest
from django.urls import reverse

from sizing.services import catalog_load

pytestmark = pytest.mark.django_db

ARTICLE_CARDS = ["H100 80GB", "H200 141GB", "B200 192GB", "GB300 288GB"]
K3_ON_H100 = {
    "model": "kimi-k3",
    "accelerator": "h100-80gb",
    "workload": {"context_tokens": 8192, "concurrency": 1},
    "prices": {
        "usd_per_gpu_hour": 2.5,
        "api_usd_per_m_input_hit": 0.30,
        "api_usd_per_m_input_miss": 3.00,
        "api_usd_per_m_output": 15.00,
    },
}


@pytest.fixture(autouse=True)
def catalog():
    catalog_load()


def floor(client, **params):
    r = client.get(reverse("api:size_floor"), params)
    assert r.status_code == 200, r.content
    return {row["accelerator"]: row["min_gpus"] for row in r.json()["rows"]}, r.json()


def test_the_floor_at_the_articles_4_bit_is_18_10_8_5(client):
    gpus, body = floor(client, model="kimi-k3", weight_format="4-bit")
    assert body["weights_bytes"] == 1.4e12
    assert [gpus[c] for c in ARTICLE_CARDS] == [18, 10, 8, 5]


def test_the_floor_with_mxfp4_scales_is_19_11_8_6(client):
    gpus, body = floor(client, model="kimi-k3")
    assert body["weights_bytes"] == 1.4875e12
    assert [gpus[c] for c in ARTICLE_CARDS] == [19, 11, 8, 6]


@pytest.mark.parametrize("fmt, tb", [("bf16", 5.6), ("fp8", 2.8), ("4-bit", 1.4), ("2-bit", 0.7)])
def test_k3_weights_by_format(client, fmt, tb):
    _, body = floor(client, model="kimi-k3", weight_format=fmt)
    assert body["weights_bytes"] == pytest.approx(tb * 1e12, rel=1e-12)


def test_sizing_k3_on_h100_gives_every_figure(client):
    r = client.post(reverse("api:size"), K3_ON_H100, content_type="application/json")
    body = r.json()
    assert r.status_code == 200, body
    assert body["weights_bytes"] == 1.4875e12
    assert body["min_gpus_for_weights"] == 19
    assert body["kv_known"] is False and body["kv_bytes_per_token"] is None
    assert body["recommended_gpus"] >= 19
    assert "cannot run on one GPU" in body["verdicts"]["single_gpu"]
    gpus = body["recommended_gpus"]
    assert body["monthly_cost_usd"]["tier1"] == pytest.approx(gpus * 720 * 2.5)


def test_an_inline_model_gives_the_articles_kv_figures(client):
    dense = {
        "name": "Worked example",
        "total_params": 70_000_000_000,
        "layers": 64,
        "attention_heads": 64,
        "attention": [{"kind": "full", "layers": 64, "kv_heads": 8, "head_dim": 128}],
    }
    payload = {
        "model": dense,
        "accelerator": "h100-80gb",
        "workload": {"context_tokens": 131072, "kv_dtype": "fp8"},
    }
    body = client.post(reverse("api:size"), payload, content_type="application/json").json()
    assert body["kv_bytes_per_token"] == 131_072
    assert body["kv_bytes_per_user"] == 16 * 2**30


@pytest.mark.parametrize(
    "change, field",
    [
        ({"workload": {"context_tokens": -1}}, "workload.context_tokens"),
        ({"workload": {"utilisation": 1.5}}, "workload.utilisation"),
        ({"prices": {"usd_per_gpu_hour": -2.5}}, "prices.usd_per_gpu_hour"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_bad_sizing_input_is_a_422_naming_the_field(client, change, field):
    r = client.post(reverse("api:size"), {**K3_ON_H100, **change}, content_type="application/json")
    assert r.status_code == 422
    assert field in {d["field"] for d in r.json()["detail"]}


def test_an_unknown_model_slug_is_a_404(client):
    r = client.post(
        reverse("api:size"), {**K3_ON_H100, "model": "nope"}, content_type="application/json"
    )
    assert r.status_code == 404


def test_an_engine_error_names_the_field(client):
    bad = {"name": "Bad", "total_params": 1000, "active_params": 2000}
    r = client.post(
        reverse("api:size"), {**K3_ON_H100, "model": bad}, content_type="application/json"
    )
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == "model.active_params"
