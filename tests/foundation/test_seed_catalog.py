"""The seeded catalog: real models and accelerators, sourced and dated, loaded safely twice."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from sizing.models import Accelerator, LLMModel
from sizing.services import catalog_load

pytestmark = pytest.mark.django_db

ARTICLE_CARDS = ["h100-80gb", "h200-141gb", "b200-192gb", "gb300-288gb"]


@pytest.fixture
def catalog():
    report = catalog_load()
    assert report.failed == []
    return report


def test_it_seeds_at_least_fourteen_models_and_accelerators(catalog):
    assert LLMModel.objects.exclude(slug="kimi-k3").count() >= 14
    assert Accelerator.objects.count() >= 14
    assert set(ARTICLE_CARDS) <= set(Accelerator.objects.values_list("slug", flat=True))


def test_every_accelerator_carries_a_source_and_a_date(catalog):
    for acc in Accelerator.objects.all():
        assert acc.source_url.startswith("https://"), acc.slug
        assert acc.figures_as_of is not None, acc.slug


def test_every_model_carries_a_source_and_a_date(catalog):
    for llm in LLMModel.objects.all():
        assert llm.figures_as_of is not None, llm.slug
        assert llm.source_url or llm.source_note, llm.slug


def test_kimi_k3_is_seeded_as_the_article_gives_it(catalog):
    k3 = LLMModel.objects.get(slug="kimi-k3")
    assert k3.total_params == 2_800_000_000_000
    assert k3.active_params == 104_000_000_000
    assert (k3.routed_experts, k3.active_experts, k3.layers) == (896, 16, 93)
    assert k3.weight_format.name == "mxfp4"
    groups = [(g.kind, g.layers) for g in k3.attention_groups.all()]
    assert groups == [("linear", 69), ("mla", 24)]
    mla = k3.attention_groups.get(kind="mla")
    assert mla.kv_lora_rank is None and mla.qk_rope_head_dim is None  # unpublished: unknown


def test_the_seed_covers_every_attention_layout(catalog):
    kinds = set(LLMModel.objects.values_list("attention_groups__kind", flat=True))
    assert {"full", "sliding", "mla", "linear"} <= kinds
    assert LLMModel.objects.filter(routed_experts__isnull=False).count() >= 6
    assert LLMModel.objects.filter(tensor_groups__weight_format__name="mxfp4").exists()


def test_loading_twice_adds_nothing_and_keeps_staff_edits(catalog):
    h100 = Accelerator.objects.get(slug="h100-80gb")
    h100.notes = "edited by staff"
    h100.save()
    counts = (LLMModel.objects.count(), Accelerator.objects.count())

    call_command("load_catalog")

    assert (LLMModel.objects.count(), Accelerator.objects.count()) == counts
    assert Accelerator.objects.get(slug="h100-80gb").notes == "edited by staff"


def test_the_home_page_lists_the_catalog(client, catalog, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        r = client.get(reverse("home"))
    assert r.status_code == 200
    html = r.content.decode()
    assert "Kimi K3" in html and "2.8T" in html and "104B" in html
    assert "GB300 288GB" in html and "Llama 3.1 405B" in html


def test_unknown_figures_show_as_unknown(client, catalog):
    r = client.get(reverse("model-detail", args=["kimi-k3"]))
    html = r.content.decode()
    assert r.status_code == 200
    assert "unknown" in html
    assert "None" not in html


def test_a_missing_model_is_a_404(client, catalog):
    assert client.get(reverse("model-detail", args=["no-such-model"])).status_code == 404
