"""Staff edit the catalog in the admin; impossible values are refused with the field named."""

import pytest
from django.urls import reverse

from sizing.models import Accelerator, LLMModel
from sizing.services import weight_formats_sync

pytestmark = pytest.mark.django_db


def accelerator_form(**overrides):
    data = {
        "name": "Test card",
        "slug": "test-card",
        "vendor": "Acme",
        "kind": "datacenter",
        "memory_gb": "80",
        "gpus_per_node": "8",
        "source_url": "",
        "source_note": "",
        "figures_as_of": "",
        "notes": "",
    }
    return {**data, **overrides}


def model_form(**overrides):
    bf16 = weight_formats_sync()["bf16"]
    data = {
        "name": "Tiny",
        "slug": "tiny",
        "vendor": "",
        "licence": "",
        "architecture": "",
        "weight_format": str(bf16.pk),
        "kv_dtype": "bf16",
        "total_params": "1000",
        "active_params": "1000",
        "source_url": "",
        "source_note": "",
        "notes": "",
        "attention_groups-TOTAL_FORMS": "0",
        "attention_groups-INITIAL_FORMS": "0",
        "tensor_groups-TOTAL_FORMS": "0",
        "tensor_groups-INITIAL_FORMS": "0",
    }
    return {**data, **overrides}


def test_it_adds_an_accelerator(client, staff):
    client.force_login(staff)
    r = client.post(reverse("admin:sizing_accelerator_add"), accelerator_form())
    assert r.status_code == 302
    assert Accelerator.objects.get(slug="test-card").memory_gb == 80


def test_it_rejects_negative_memory_naming_the_field(client, staff):
    client.force_login(staff)
    r = client.post(reverse("admin:sizing_accelerator_add"), accelerator_form(memory_gb="-80"))
    assert r.status_code == 200
    assert "memory_gb" in r.context["adminform"].form.errors
    assert not Accelerator.objects.exists()


def test_it_rejects_active_params_above_total(client, staff):
    client.force_login(staff)
    form = model_form(total_params="1000", active_params="2000")
    r = client.post(reverse("admin:sizing_llmmodel_add"), form)
    assert r.status_code == 200
    errors = r.context["adminform"].form.errors
    assert "cannot exceed the total" in errors["active_params"][0]
    assert not LLMModel.objects.exists()


def test_it_rejects_an_attention_group_with_no_layers(client, staff):
    client.force_login(staff)
    form = model_form(
        **{
            "attention_groups-TOTAL_FORMS": "1",
            "attention_groups-0-position": "0",
            "attention_groups-0-kind": "full",
            "attention_groups-0-layers": "0",
            "attention_groups-0-kv_heads": "8",
            "attention_groups-0-head_dim": "128",
            "attention_groups-0-state_bytes_per_element": "4",
        }
    )
    r = client.post(reverse("admin:sizing_llmmodel_add"), form)
    assert r.status_code == 200
    inline_errors = r.context["inline_admin_formsets"][0].formset.errors
    assert "layers" in inline_errors[0]
    assert not LLMModel.objects.exists()


def test_it_rejects_fields_that_do_not_belong_to_the_kind(client, staff):
    client.force_login(staff)
    form = model_form(
        **{
            "attention_groups-TOTAL_FORMS": "1",
            "attention_groups-0-position": "0",
            "attention_groups-0-kind": "mla",
            "attention_groups-0-layers": "61",
            "attention_groups-0-window_tokens": "4096",
            "attention_groups-0-state_bytes_per_element": "4",
        }
    )
    r = client.post(reverse("admin:sizing_llmmodel_add"), form)
    assert r.status_code == 200
    assert "window_tokens" in r.context["inline_admin_formsets"][0].formset.errors[0]
