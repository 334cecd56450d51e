"""The README's httpx script works against a running server, end to end."""

import json
import sys
from pathlib import Path

import pytest

from sizing.models import LLMModel
from sizing.services import catalog_load
from teams.services import api_token_create

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

import api_client  # noqa: E402


@pytest.mark.django_db(transaction=True)
def test_a_tool_imports_sizes_saves_and_compares_with_httpx_only(live_server, staff):
    catalog_load()
    _, token = api_token_create(user=staff, name="script")
    config = json.loads((ROOT / "sizing/catalog/configs/qwen3-14b.json").read_text())

    out = api_client.run(live_server.url, token, config, name="My Qwen3 14B", slug="my-qwen3-14b")

    assert LLMModel.objects.filter(slug="my-qwen3-14b").exists()
    assert out["imported"]["total_params"] == pytest.approx(14.8e9, rel=0.01)
    assert out["sizes"]["h100-80gb"]["recommended_gpus"] == 1
    assert out["sizes"]["rtx-4090-24gb"]["recommended_gpus"] >= 2
    names = [s["name"] for s in out["compare"]["scenarios"]]
    assert names == ["My Qwen3 14B on H100", "K3 on H100"]
    gpus = next(r for r in out["compare"]["rows"] if r["figure"] == "gpus")
    assert gpus["values"] == [1, 32]
