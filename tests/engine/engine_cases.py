"""The article's model, cards and prices as engine inputs, shared by the engine tests."""

from sizing.engine import (
    AcceleratorSpec,
    AttentionGroup,
    ExpertSpec,
    ModelSpec,
    Prices,
)

# The article's four cards (memory as sold). Bandwidth and peaks are vendor datasheet figures,
# dense; only the memory matters for the golden figures.
H100 = AcceleratorSpec("H100 80GB", 80, 3.35, 989, 1979, None, gpus_per_node=8)
H200 = AcceleratorSpec("H200 141GB", 141, 4.8, 989, 1979, None, gpus_per_node=8)
B200 = AcceleratorSpec("B200 192GB", 192, 8.0, 2250, 4500, 9000, gpus_per_node=8)
GB300 = AcceleratorSpec("GB300 288GB", 288, 8.0, 2500, 5000, 15000, gpus_per_node=72)
ARTICLE_CARDS = (H100, H200, B200, GB300)

# The article's rent assumption and Moonshot's published API prices.
ARTICLE_PRICES = Prices(
    usd_per_gpu_hour=2.50,
    api_usd_per_m_input_hit=0.30,
    api_usd_per_m_input_miss=3.00,
    api_usd_per_m_output=15.00,
)


def k3_model() -> ModelSpec:
    # Latent dimensions unpublished: every KDA / MLA dimension stays None (unknown).
    return ModelSpec(
        name="K3",
        total_params=2_800_000_000_000,
        active_params=104_000_000_000,
        layers=93,
        attention=(
            AttentionGroup("linear", 69, note="KDA (Kimi Delta Attention)"),
            AttentionGroup("mla", 24, note="gated MLA"),
        ),
        experts=ExpertSpec(routed=896, active=16),
        weight_format="mxfp4",
        repo_id="moonshotai/Kimi-K3",
    )


def dense_model(
    name: str = "dense",
    params: int = 32_000_000_000,
    layers: int = 64,
    kv_heads: int = 8,
    head_dim: int = 128,
    heads: int | None = 64,
    weight_format: str = "bf16",
    kv_dtype: str = "bf16",
) -> ModelSpec:
    return ModelSpec(
        name=name,
        total_params=params,
        layers=layers,
        attention=(AttentionGroup("full", layers, kv_heads=kv_heads, head_dim=head_dim),),
        weight_format=weight_format,
        attention_heads=heads,
        kv_dtype=kv_dtype,
    )


# Dense references, dimensions from their config.json files.
def qwen_7b() -> ModelSpec:
    return dense_model("Qwen2.5-7B", 7_620_000_000, 28, 4, 128, 28)


def llama_70b() -> ModelSpec:
    return dense_model("Llama-3.1-70B", 70_600_000_000, 80, 8, 128, 64)


def llama_405b() -> ModelSpec:
    return dense_model("Llama-3.1-405B", 405_000_000_000, 126, 8, 128, 128)
