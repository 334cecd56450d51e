"""Properties over random inputs: monotone memory, monotone fit, field-named errors."""

import math
from dataclasses import replace

from engine_cases import ARTICLE_PRICES, H100
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.engine import (
    AcceleratorSpec,
    Assumptions,
    AttentionGroup,
    ExpertSpec,
    ModelSpec,
    Scenario,
    SizingError,
    Workload,
    evaluate,
    kv_profile,
    plan_layout,
)
from sizing.engine.kv import bytes_per_user, max_context_tokens
from sizing.engine.layout import candidate_gpu_counts, split_parallel

dims = st.integers(1, 256)

full = st.builds(AttentionGroup, st.just("full"), st.integers(1, 64), kv_heads=dims, head_dim=dims)
sliding = st.builds(
    AttentionGroup, st.just("sliding"), st.integers(1, 64), kv_heads=dims, head_dim=dims,
    window_tokens=st.integers(1, 2**17),
)  # fmt: skip
mla = st.builds(
    AttentionGroup, st.just("mla"), st.integers(1, 64), kv_lora_rank=dims, qk_rope_head_dim=dims
)
linear = st.builds(
    AttentionGroup, st.just("linear"), st.integers(1, 64), state_heads=dims, state_key_dim=dims,
    state_value_dim=dims, conv_state_elements=st.integers(0, 10_000),
)  # fmt: skip
groups = st.lists(st.one_of(full, sliding, mla, linear), min_size=1, max_size=4).map(tuple)


@st.composite
def models(draw) -> ModelSpec:
    attention = draw(groups)
    total = draw(st.integers(10**8, 2 * 10**12))
    moe = draw(st.booleans())
    experts = active = None
    if moe:
        routed = draw(st.sampled_from([8, 16, 60, 64, 128, 256, 384, 896]))
        experts = ExpertSpec(routed, draw(st.integers(1, min(16, routed))))
        active = draw(st.integers(1, total))
    return ModelSpec(
        name="random",
        total_params=total,
        active_params=active,
        layers=sum(g.layers for g in attention),
        attention=attention,
        experts=experts,
        weight_format=draw(st.sampled_from(["bf16", "fp8", "mxfp4", "Q4_K"])),
        attention_heads=draw(st.one_of(st.none(), st.sampled_from([8, 28, 32, 40, 64, 128]))),
        kv_dtype=draw(st.sampled_from(["bf16", "fp8"])),
    )


accelerators = st.builds(
    AcceleratorSpec,
    st.just("card"),
    st.sampled_from([16, 24, 48, 80, 141, 192, 288]),
    st.floats(0.5, 8),
    gpus_per_node=st.sampled_from([1, 4, 8, 72]),
)


@settings(deadline=None)
@given(models(), st.integers(1, 2**26), st.integers(1, 2**26))
def test_more_context_never_needs_less_memory(model, a, b):
    short, long = sorted((a, b))
    profile = kv_profile(model)
    assert bytes_per_user(profile, short) <= bytes_per_user(profile, long)


@settings(deadline=None)
@given(models(), st.integers(1, 2**20), st.integers(1, 64), st.floats(1e6, 1e12))
def test_max_context_is_the_longest_that_fits(model, _context, users, free):
    profile = kv_profile(model)
    longest = max_context_tokens(profile, free, users, cap=2**27)
    assert longest is not None
    if longest == 0:
        assert bytes_per_user(profile, 1) * users > free * (1 - 1e-9)
        return
    assert bytes_per_user(profile, longest) * users <= free * (1 + 1e-9)
    if longest < 2**27:
        assert bytes_per_user(profile, longest + 1) * users > free * (1 - 1e-9)


@settings(deadline=None)
@given(models(), st.integers(1, 2**17), st.integers(1, 2**17), st.integers(1, 16))
def test_more_context_never_shrinks_the_per_gpu_memory(model, a, b, users):
    short, long = sorted((a, b))
    card = AcceleratorSpec("huge", 1e5, 1.0)
    small = plan_layout(model, card, 1, Workload(context_tokens=short, concurrency=users))
    big = plan_layout(model, card, 1, Workload(context_tokens=long, concurrency=users))
    assert small.per_gpu is not None and big.per_gpu is not None
    assert small.per_gpu.used_gb <= big.per_gpu.used_gb


@settings(deadline=None)
@given(models(), accelerators, st.integers(1, 2**16), st.integers(1, 64))
def test_more_gpus_never_fit_less(model, card, context, users):
    workload = Workload(context_tokens=context, concurrency=users)
    routed = model.experts.routed if model.experts else None
    counts = [
        n for n in candidate_gpu_counts(card.gpus_per_node, 16)
        if split_parallel(n, card.gpus_per_node, model.attention_heads, routed)
    ]  # fmt: skip
    fitted = False
    for n in counts:
        layout = plan_layout(model, card, n, workload)
        assert layout.fits or not fitted, f"fits on fewer GPUs but not on {n}"
        fitted = fitted or layout.fits


@settings(deadline=None)
@given(models(), accelerators, st.integers(1, 2**16))
def test_recommended_layout_is_the_smallest_that_fits(model, card, context):
    workload = Workload(context_tokens=context)
    result = evaluate(Scenario(model, card, workload, assumptions=Assumptions(max_nodes=8)))
    layout = result.layout
    if not layout.fits:
        return
    per_gpu = layout.per_gpu
    assert per_gpu is not None
    assert per_gpu.used_gb <= card.memory_gb * 0.9 * (1 + 1e-9)
    assert layout.tp * layout.ep * layout.pp == layout.gpus
    for n in candidate_gpu_counts(card.gpus_per_node, 8):
        if n >= layout.gpus:
            break
        assert not plan_layout(model, card, n, workload).fits


BAD_NUMBERS = st.one_of(
    st.just(math.nan), st.just(math.inf), st.just(-math.inf), st.floats(max_value=-1e-9)
)
NUMERIC_FIELDS = [
    ("workload", "context_tokens"),
    ("workload", "concurrency"),
    ("workload", "utilisation"),
    ("workload", "hours_per_day"),
    ("workload", "monthly_output_tokens"),
    ("workload", "monthly_input_tokens"),
    ("workload", "cached_input_share"),
    ("workload", "prompt_tokens"),
    ("model", "total_params"),
    ("model", "active_params"),
    ("model", "layers"),
    ("accelerator", "memory_gb"),
    ("accelerator", "bandwidth_tb_s"),
    ("accelerator", "bf16_tflops"),
    ("accelerator", "gpus_per_node"),
    ("prices", "usd_per_gpu_hour"),
    ("prices", "api_usd_per_m_output"),
    ("prices", "gateway_usd_per_month"),
    ("assumptions", "runtime_overhead_gb"),
    ("assumptions", "memory_utilisation_cap"),
    ("assumptions", "bandwidth_efficiency"),
    ("assumptions", "download_gb_s"),
]


@settings(deadline=None)
@given(st.sampled_from(NUMERIC_FIELDS), BAD_NUMBERS)
def test_bad_numbers_raise_sizing_error_naming_the_field(where, value):
    part, name = where
    base = Scenario(
        ModelSpec("m", 10**10, 10**9, 4, (AttentionGroup("full", 4, kv_heads=2, head_dim=64),)),
        H100,
        Workload(),
        ARTICLE_PRICES,
    )
    bad = replace(base, **{part: replace(getattr(base, part), **{name: value})})
    try:
        evaluate(bad)
    except SizingError as error:
        assert error.field == f"{part}.{name}"
    else:
        raise AssertionError(f"{part}.{name}={value!r} was accepted")


@settings(deadline=None)
@given(st.integers(max_value=0), st.sampled_from(["kv_heads", "head_dim", "layers"]))
def test_non_positive_dimensions_raise(value, name):
    group = replace(AttentionGroup("full", 4, kv_heads=2, head_dim=64), **{name: value})
    model = ModelSpec("m", 10**10, attention=(group,))
    try:
        evaluate(Scenario(model, H100))
    except SizingError as error:
        assert error.field == f"model.attention[0].{name}"
    else:
        raise AssertionError("accepted")
