"""Engine benchmark: `python -m sizing.bench`. One core, best of a few runs.

Timed in process CPU time, so other work on a shared machine does not count against us.

Targets: >= 20,000 single-accelerator evaluations/s, >= 1,000 catalog-wide evaluations/s,
a 500-point break-even series in < 5 ms.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import replace

from sizing.engine import (
    AcceleratorSpec,
    AttentionGroup,
    ExpertSpec,
    ModelSpec,
    Prices,
    Scenario,
    Workload,
    break_even_series,
    evaluate,
)

# Rough datasheet figures (memory GB, TB/s, dense bf16/fp8/fp4 TFLOPS): enough to exercise the
# engine, not a catalog to quote from.
CATALOG = (
    AcceleratorSpec("H100 80GB", 80, 3.35, 989, 1979, None),
    AcceleratorSpec("H200 141GB", 141, 4.8, 989, 1979, None),
    AcceleratorSpec("B200 192GB", 192, 8.0, 2250, 4500, 9000),
    AcceleratorSpec("GB200 192GB", 192, 8.0, 2500, 5000, 10000, gpus_per_node=72),
    AcceleratorSpec("GB300 288GB", 288, 8.0, 2500, 5000, 15000, gpus_per_node=72),
    AcceleratorSpec("MI300X 192GB", 192, 5.3, 1307, 2615, None),
    AcceleratorSpec("MI325X 256GB", 256, 6.0, 1307, 2615, None),
    AcceleratorSpec("MI355X 288GB", 288, 8.0, 2500, 5000, 10000),
    AcceleratorSpec("A100 80GB", 80, 2.0, 312, None, None),
    AcceleratorSpec("L40S 48GB", 48, 0.864, 362, 733, None),
    AcceleratorSpec("RTX 4090 24GB", 24, 1.008, 165, 330, None, gpus_per_node=1),
    AcceleratorSpec("RTX 5090 32GB", 32, 1.79, 209, 419, 838, gpus_per_node=1),
    AcceleratorSpec("RTX 6000 48GB", 48, 0.96, 364, 728, None, gpus_per_node=1),
    AcceleratorSpec("M3 Ultra 512GB", 512, 0.819, 57, None, None, gpus_per_node=1),
)

K3 = ModelSpec(
    name="K3",
    total_params=2_800_000_000_000,
    active_params=104_000_000_000,
    layers=93,
    attention=(AttentionGroup("linear", 69), AttentionGroup("mla", 24)),
    experts=ExpertSpec(896, 16),
    weight_format="mxfp4",
)
# A model whose KV is known, so the KV paths run too.
DSV3 = ModelSpec(
    name="DeepSeek-V3",
    total_params=671_000_000_000,
    active_params=37_000_000_000,
    layers=61,
    attention=(AttentionGroup("mla", 61, kv_lora_rank=512, qk_rope_head_dim=64),),
    experts=ExpertSpec(256, 8, shared=1),
    weight_format="fp8",
    attention_heads=128,
)
PRICES = Prices(2.50, 0.30, 3.00, 15.00, 20.0)
WORKLOAD = Workload(
    context_tokens=32_768,
    concurrency=64,
    monthly_input_tokens=5e9,
    cached_input_share=0.8,
    monthly_output_tokens=5e8,
)


def best_rate(fn: Callable[[], object], calls: int, repeats: int = 5) -> float:
    """Calls per second, best of `repeats` batches of `calls`."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, time.process_time() - start)
    return calls / best


def main() -> None:
    h100 = CATALOG[0]
    k3 = Scenario(K3, h100, WORKLOAD, PRICES)
    dsv3 = Scenario(DSV3, h100, WORKLOAD, PRICES)
    # A new context length every call, cycling through more than the caches hold, so every call
    # recomputes the layout, speed and tier 2 (what the builder does as the context changes).
    fresh = [
        replace(dsv3, workload=replace(WORKLOAD, context_tokens=4096 + i)) for i in range(20_000)
    ]
    it = itertools.cycle(fresh)

    print("sizing engine benchmark (one core)")
    rate = best_rate(lambda: evaluate(k3), 20_000)
    print(f"  evaluate, K3 on one accelerator, all tiers:        {rate:12,.0f} /s")
    rate = best_rate(lambda: evaluate(dsv3), 20_000)
    print(f"  evaluate, DeepSeek-V3 (KV known), one accelerator:  {rate:12,.0f} /s")
    rate = best_rate(lambda: evaluate(next(it)), 20_000)
    print(f"  evaluate, a new context length every call:         {rate:12,.0f} /s")

    per_card = [replace(dsv3, accelerator=acc) for acc in CATALOG]

    def catalog_wide() -> None:
        for s in per_card:
            evaluate(s, CATALOG)

    rate = best_rate(catalog_wide, 1_000)
    print(f"  catalog-wide: all tiers on each of {len(CATALOG)} cards:     {rate:12,.0f} /s")

    contexts = itertools.cycle(range(4096, 4096 + 2_000))  # 2,000 x 14 keys: more than cached

    def catalog_wide_fresh() -> None:
        workload = replace(WORKLOAD, context_tokens=next(contexts))
        for s in per_card:
            evaluate(replace(s, workload=workload), CATALOG)

    rate = best_rate(catalog_wide_fresh, 500)
    print(f"  catalog-wide, a new context length every time:     {rate:12,.0f} /s")
    rate = best_rate(lambda: evaluate(dsv3, CATALOG), 20_000)
    print(f"  evaluate with the {len(CATALOG)}-card floor table:           {rate:12,.0f} /s")

    series = best_rate(lambda: break_even_series(57_600, 23.4, 20.0, 8e9, points=500), 200)
    print(f"  break-even series, 500 points:                     {1000 / series:12.3f} ms")


if __name__ == "__main__":
    main()
