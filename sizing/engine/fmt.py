"""Numbers as a planner writes them in a report: 1,800 · 1.49 TB · 25 minutes · $14,400 · 960 M."""

from __future__ import annotations

import math
from functools import lru_cache

# Verdicts repeat the same few figures (weights, card sizes, prices) on every evaluation, so the
# formatters remember recent values.

# Decimal units for memory and checkpoints (vendors sell 80 GB = 80e9 bytes).
_BYTE_UNITS = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))
GIB = 2**30  # the article's KV-per-user figures are in GiB
KIB = 2**10


@lru_cache(maxsize=4096)
def sig(x: float, digits: int = 3) -> str:
    """x to `digits` significant figures, no trailing zeros, thousands separated."""
    a = abs(x)
    if a >= 10 ** (digits - 1) and a != math.inf:
        return f"{x:,.0f}"  # 288, 12,346: whole numbers already carry the figures
    if a == 0 or not math.isfinite(a):
        return f"{x:g}"
    if a >= 1:
        decimals = digits - 1 - (a >= 10) - (a >= 100)
    else:
        decimals = digits - 1 - math.floor(math.log10(a))
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if decimals else text


def fmt_int(n: float) -> str:
    return f"{round(n):,}"


# 999.6 GB reads better as 1 TB than as "1,000 GB": switch units just below the round number
_BYTE_STEPS = tuple((scale * 0.9995, scale, unit) for scale, unit in _BYTE_UNITS)


@lru_cache(maxsize=4096)
def fmt_bytes(b: float) -> str:
    a = abs(b)
    for threshold, scale, unit in _BYTE_STEPS:
        if a >= threshold:
            return f"{sig(b / scale)} {unit}"
    return f"{fmt_int(b)} B"


def fmt_gb(gb: float) -> str:
    return fmt_bytes(gb * 1e9)


def fmt_gib(b: float) -> str:
    return f"{sig(b / GIB)} GiB"


@lru_cache(maxsize=4096)
def fmt_usd(x: float) -> str:
    if abs(x) >= 100:
        return f"${x:,.0f}"
    if abs(x) >= 0.01 or x == 0:
        return f"${x:,.2f}"
    return f"${sig(x, 2)}"


@lru_cache(maxsize=4096)
def fmt_duration(s: float) -> str:
    if s < 90:
        return f"{sig(s, 2)} seconds"
    if s < 90 * 60:
        return f"{round(s / 60)} minutes"
    if s < 48 * 3600:
        return f"{sig(s / 3600, 2)} hours"
    return f"{sig(s / 86400, 2)} days"


@lru_cache(maxsize=4096)
def fmt_tokens(n: float) -> str:
    if abs(n) >= 1e9:
        return f"{sig(n / 1e9)} B"
    if abs(n) >= 1e6:
        return f"{sig(n / 1e6)} M"
    if abs(n) >= 1e3:
        return f"{sig(n / 1e3)} k"
    return fmt_int(n)


def fmt_params(n: float) -> str:
    if n >= 1e12:
        return f"{sig(n / 1e12)}T"
    if n >= 1e9:
        return f"{sig(n / 1e9)}B"
    return f"{sig(n / 1e6)}M"
