"""Bad input raises SizingError naming the field at fault."""

import math
from dataclasses import replace

import pytest
from engine_cases import ARTICLE_PRICES, H100, k3_model

from sizing.engine import (
    AttentionGroup,
    ExpertSpec,
    Scenario,
    SizingError,
    TensorGroup,
    Workload,
    evaluate,
    floor_table,
)


def _scenario() -> Scenario:
    return Scenario(k3_model(), H100, Workload(), ARTICLE_PRICES)


def _with(part: str, **changes) -> Scenario:
    s = _scenario()
    return replace(s, **{part: replace(getattr(s, part), **changes)})


BAD = [
    ("workload", {"context_tokens": 0}, "workload.context_tokens"),
    ("workload", {"context_tokens": -8}, "workload.context_tokens"),
    ("workload", {"context_tokens": 2**27 + 1}, "workload.context_tokens"),
    ("workload", {"context_tokens": 8192.5}, "workload.context_tokens"),
    ("workload", {"concurrency": 0}, "workload.concurrency"),
    ("workload", {"utilisation": 0.0}, "workload.utilisation"),
    ("workload", {"utilisation": 1.5}, "workload.utilisation"),
    ("workload", {"utilisation": math.nan}, "workload.utilisation"),
    ("workload", {"hours_per_day": 25}, "workload.hours_per_day"),
    ("workload", {"hours_per_day": 0}, "workload.hours_per_day"),
    ("workload", {"days_per_month": 0}, "workload.days_per_month"),
    ("workload", {"monthly_output_tokens": -1}, "workload.monthly_output_tokens"),
    ("workload", {"monthly_input_tokens": math.inf}, "workload.monthly_input_tokens"),
    ("workload", {"cached_input_share": 1.1}, "workload.cached_input_share"),
    ("workload", {"kv_dtype": "fp6"}, "workload.kv_dtype"),
    ("workload", {"prompt_tokens": 0}, "workload.prompt_tokens"),
    ("model", {"total_params": 0}, "model.total_params"),
    ("model", {"total_params": -5}, "model.total_params"),
    ("model", {"total_params": 2 * 10**15}, "model.total_params"),
    ("model", {"active_params": 3 * 10**12}, "model.active_params"),
    ("model", {"active_params": 0}, "model.active_params"),
    ("model", {"layers": 0}, "model.layers"),
    ("model", {"layers": 94}, "model.attention"),  # the groups cover 93
    ("model", {"weight_format": "fp3"}, "model.weight_format"),
    ("model", {"kv_dtype": "int2"}, "model.kv_dtype"),
    ("model", {"attention_heads": 0}, "model.attention_heads"),
    ("model", {"checkpoint_bytes": -1}, "model.checkpoint_bytes"),
    ("model", {"max_context_tokens": 4096}, "workload.context_tokens"),  # 8192 asked
    ("model", {"attention": (AttentionGroup("ring", 93),)}, "model.attention[0].kind"),
    ("model", {"attention": (AttentionGroup("full", 0),)}, "model.attention[0].layers"),
    ("model", {"attention": (AttentionGroup("full", 93, kv_heads=-1),)},
     "model.attention[0].kv_heads"),
    ("model", {"attention": (AttentionGroup("linear", 93, state_bytes_per_element=math.nan),)},
     "model.attention[0].state_bytes_per_element"),
    ("model", {"attention": [AttentionGroup("full", 93)]}, "model.attention"),
    ("model", {"experts": ExpertSpec(16, 17)}, "model.experts.active"),
    ("model", {"experts": ExpertSpec(0, 0)}, "model.experts.routed"),
    ("model", {"experts": ExpertSpec(896, 16, moe_layers=100)}, "model.experts.moe_layers"),
    ("model", {"experts": ExpertSpec(896, 16, params_per_expert=10**11, moe_layers=90)},
     "model.experts.params_per_expert"),
    ("model", {"tensor_groups": (TensorGroup("experts", 0, "mxfp4"),)},
     "model.tensor_groups[0].params"),
    ("model", {"tensor_groups": (TensorGroup("experts", 10, "fp5"),)},
     "model.tensor_groups[0].weight_format"),
    ("accelerator", {"memory_gb": 0}, "accelerator.memory_gb"),
    ("accelerator", {"memory_gb": -80}, "accelerator.memory_gb"),
    ("accelerator", {"memory_gb": math.inf}, "accelerator.memory_gb"),
    ("accelerator", {"memory_gb": 1e7}, "accelerator.memory_gb"),
    ("accelerator", {"bandwidth_tb_s": 0}, "accelerator.bandwidth_tb_s"),
    ("accelerator", {"fp8_tflops": math.nan}, "accelerator.fp8_tflops"),
    ("accelerator", {"gpus_per_node": 0}, "accelerator.gpus_per_node"),
    ("accelerator", {"gpus_per_node": True}, "accelerator.gpus_per_node"),
    ("prices", {"usd_per_gpu_hour": 0}, "prices.usd_per_gpu_hour"),
    ("prices", {"usd_per_gpu_hour": -2.5}, "prices.usd_per_gpu_hour"),
    ("prices", {"api_usd_per_m_output": math.nan}, "prices.api_usd_per_m_output"),
    ("prices", {"gateway_usd_per_month": -1}, "prices.gateway_usd_per_month"),
    ("assumptions", {"memory_utilisation_cap": 0}, "assumptions.memory_utilisation_cap"),
    ("assumptions", {"memory_utilisation_cap": 1.2}, "assumptions.memory_utilisation_cap"),
    ("assumptions", {"bandwidth_efficiency": 0}, "assumptions.bandwidth_efficiency"),
    ("assumptions", {"compute_efficiency": -0.1}, "assumptions.compute_efficiency"),
    ("assumptions", {"runtime_overhead_gb": -2}, "assumptions.runtime_overhead_gb"),
    ("assumptions", {"download_gb_s": 0}, "assumptions.download_gb_s"),
    ("assumptions", {"max_nodes": 0}, "assumptions.max_nodes"),
    ("assumptions", {"ram_bandwidth_gb_s": "fast"}, "assumptions.ram_bandwidth_gb_s"),
]  # fmt: skip


@pytest.mark.parametrize(("part", "changes", "field"), BAD)
def test_bad_input_names_the_field(part, changes, field):
    with pytest.raises(SizingError) as caught:
        evaluate(_with(part, **changes))
    assert caught.value.field == field
    assert caught.value.reason
    assert str(caught.value).startswith(field + ": ")


def test_sizing_error_is_a_value_error():
    assert issubclass(SizingError, ValueError)


def test_catalog_entries_are_checked_by_position():
    bad = replace(H100, memory_gb=-1)
    with pytest.raises(SizingError) as caught:
        evaluate(_scenario(), [H100, bad])
    assert caught.value.field == "catalog[1].memory_gb"
    with pytest.raises(SizingError) as caught:
        floor_table(k3_model(), [bad])
    assert caught.value.field == "catalog[0].memory_gb"


def test_unknown_override_format():
    with pytest.raises(SizingError) as caught:
        floor_table(k3_model(), [H100], weight_format="3-bit")
    assert caught.value.field == "weight_format"


def test_not_a_scenario():
    with pytest.raises(SizingError) as caught:
        evaluate("K3 on H100")  # type: ignore[arg-type]
    assert caught.value.field == "scenario"
