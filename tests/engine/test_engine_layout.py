"""The weights-only floor and the recommended layout."""

import pytest
from engine_cases import H100, k3_model, llama_70b, llama_405b, qwen_7b

from sizing.engine import (
    AcceleratorSpec,
    Assumptions,
    ExpertSpec,
    ModelSpec,
    Workload,
    min_gpus_for_weights,
    plan_layout,
    recommend_layout,
)
from sizing.engine.layout import candidate_gpu_counts, split_parallel


@pytest.mark.parametrize(
    ("weights_bytes", "memory_gb", "gpus"),
    [
        (1.4e12, 80, 18),  # 17.5 -> 18
        (1.6e12, 80, 20),  # exact: must not round up to 21
        (0.3e12, 0.1, 3000),  # 0.3 / 0.1 is 2.9999999999999996 in floats
        (0.7e12, 0.1, 7000),  # and 0.7 / 0.1 is 7.000000000000001
        (1, 80, 1),
        (80e9 + 1, 80, 2),
    ],
)
def test_floor_is_a_float_safe_ceiling(weights_bytes, memory_gb, gpus):
    assert min_gpus_for_weights(weights_bytes, memory_gb) == gpus


def test_candidate_counts_are_powers_of_two_in_a_node_then_whole_nodes():
    assert candidate_gpu_counts(8, 4) == (1, 2, 4, 8, 16, 24, 32)
    assert candidate_gpu_counts(72, 2) == (1, 2, 4, 8, 16, 32, 64, 72, 144)
    assert candidate_gpu_counts(1, 3) == (1, 2, 3)


@pytest.mark.parametrize(
    ("gpus", "heads", "routed", "split"),
    [
        (8, 64, None, (8, 1, 1)),  # dense: TP across the node
        (16, 64, None, (8, 1, 2)),  # dense across nodes: pipeline stages
        (8, 28, None, (4, 1, 2)),  # 28 heads do not split 8 ways
        (32, None, 896, (8, 4, 1)),  # K3: TP 8 in a node, EP 4 across nodes
        (24, None, 896, None),  # 896 experts do not split over 3 EP ranks
        (6, None, None, (2, 1, 3)),  # heads unknown: TP a power of two
    ],
)
def test_parallel_split(gpus, heads, routed, split):
    assert split_parallel(gpus, 8, heads, routed) == split


def test_small_dense_model_on_one_gpu():
    layout = recommend_layout(qwen_7b(), H100, Workload(context_tokens=8192))
    assert (layout.gpus, layout.nodes, layout.tp, layout.ep, layout.pp) == (1, 1, 1, 1, 1)
    assert layout.kv_included
    split = layout.per_gpu
    assert split is not None
    total = split.weights_gb + split.kv_gb + split.activations_gb + split.overhead_gb
    assert split.used_gb == pytest.approx(total)
    assert split.used_gb + split.free_gb == pytest.approx(80)
    assert split.overhead_gb == 2.0
    assert layout.sglang_command.startswith("python3 -m sglang.launch_server --model-path ")
    assert "--tp-size 1" in layout.sglang_command
    assert "--nnodes" not in layout.sglang_command
    assert "--max-model-len 8192" in layout.vllm_command


def test_70b_bf16_needs_four_h100s():
    # 140 GB of weights: 2 x 70 GB + KV + 3 GB > 72 GB usable; 4 fit
    layout = recommend_layout(llama_70b(), H100, Workload(context_tokens=8192, concurrency=8))
    assert (layout.gpus, layout.tp) == (4, 4)
    assert "--tensor-parallel-size 4" in layout.vllm_command


def test_405b_bf16_spans_two_nodes_with_pipeline_stages():
    layout = recommend_layout(llama_405b(), H100, Workload(context_tokens=8192))
    assert (layout.gpus, layout.nodes, layout.tp, layout.pp) == (16, 2, 8, 2)
    assert "--pipeline-parallel-size 2" in layout.vllm_command
    assert "--distributed-executor-backend ray" in layout.vllm_command
    assert "--pp-size 2 " in layout.sglang_command
    assert "--nnodes 2 --node-rank <i>" in layout.sglang_command


def test_kv_grows_the_layout():
    small = recommend_layout(llama_70b(), H100, Workload(context_tokens=8192, concurrency=1))
    big = recommend_layout(llama_70b(), H100, Workload(context_tokens=131_072, concurrency=64))
    assert big.gpus > small.gpus


def test_k3_layout_is_weights_and_overhead_only(k3):
    layout = recommend_layout(k3, H100)
    assert layout.fits and not layout.kv_included
    assert layout.per_gpu is not None and layout.per_gpu.kv_gb == 0
    assert "KV cache is unknown" in layout.note
    assert "--enable-expert-parallel" in layout.vllm_command
    assert "--data-parallel-size 4" in layout.vllm_command
    assert "--headless" in layout.launch_note


def test_moe_weights_split_dense_by_tp_and_experts_by_all(k3):
    layout = plan_layout(k3, H100, 32)
    assert layout.per_gpu is not None
    even_share = 1.4875e12 / 32 / 1e9
    assert layout.per_gpu.weights_gb > even_share  # the non-expert part is copied per EP rank


def test_nothing_fits_is_a_result_not_an_exception():
    tiny = AcceleratorSpec("tiny", 8, 1.0, 100, gpus_per_node=8)
    layout = recommend_layout(k3_model(), tiny, assumptions=Assumptions(max_nodes=2))
    assert not layout.fits
    assert "2 nodes" in layout.reason
    assert layout.gpus == 0 and layout.per_gpu is None
    assert layout.sglang_command == ""


def test_overhead_larger_than_the_card_does_not_fit():
    card = AcceleratorSpec("small", 2, 1.0)
    layout = recommend_layout(qwen_7b(), card)
    assert not layout.fits
    assert "overhead" in layout.reason


def test_moe_whose_experts_never_split_does_not_fit():
    # 7 experts: EP must be 1 or 7, and TP is capped at the node
    model = ModelSpec(
        "odd", 400_000_000_000, 40_000_000_000, experts=ExpertSpec(7, 1), attention_heads=3
    )
    card = AcceleratorSpec("c", 80, 2.0, gpus_per_node=8)
    layout = recommend_layout(model, card, assumptions=Assumptions(max_nodes=4))
    assert not layout.fits


def test_plan_rejects_a_partial_node():
    assert not plan_layout(qwen_7b(), H100, 12).fits


def test_fp8_kv_shows_in_the_flags():
    layout = recommend_layout(qwen_7b(), H100, Workload(kv_dtype="fp8"))
    assert "--kv-cache-dtype fp8_e4m3" in layout.sglang_command
    assert "--kv-cache-dtype fp8" in layout.vllm_command
