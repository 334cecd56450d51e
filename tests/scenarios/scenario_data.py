"""The builder's fields for the article's scenario, shared by the scenario and browser tests."""

from scenarios.forms import builder_initial

# The article's scenario (Spanish seed, 004_…): Kimi K3 on H100 80GB at $2.50 a GPU-hour,
# the API at $0.30 cache hit / $3.00 cache miss / $15.00 output per million tokens.
K3 = {
    "llm": "kimi-k3",
    "accelerator": "h100-80gb",
    "usd_per_gpu_hour": "2.50",
    "api_usd_per_m_input_hit": "0.30",
    "api_usd_per_m_input_miss": "3.00",
    "api_usd_per_m_output": "15.00",
    "monthly_output_m_tokens": "960",
    "monthly_input_m_tokens": "0",
}


def form_data(**changes) -> dict:
    """What the builder posts for the article's K3 scenario, with changes."""
    return {**builder_initial(), **K3, **{k: str(v) for k, v in changes.items()}}
