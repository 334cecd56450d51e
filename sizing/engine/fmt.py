"""Numbers as a planner writes them in a report: 1,800 · 1.49 TB · 25 minutes · $14,400 · 960 M."""

from __future__ import annotations

import math

# Decimal units for memory and checkpoints (vendors sell 80 GB = 80e9 bytes).
_BYTE_UNITS = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))
GIB = 2**30  # the article's KV-per-user figures are in GiB
KIB = 2**10


def sig(x: float, digits: int = 3) -> str:
    """x to `digits` significant figures, no trailing zeros, thousands separated."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - magnitude)
    text = f"{round(x, decimals):,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def fmt_int(n: float) -> str:
    return f"{round(n):,}"


def fmt_bytes(b: float) -> str:
    for scale, unit in _BYTE_UNITS:
        # 999.6 GB reads better as 1 TB than as "1,000 GB"
        if abs(b) >= scale * 0.9995:
            return f"{sig(b / scale)} {unit}"
    return f"{fmt_int(b)} B"


def fmt_gb(gb: float) -> str:
    return fmt_bytes(gb * 1e9)


def fmt_gib(b: float) -> str:
    return f"{sig(b / GIB)} GiB"


def fmt_usd(x: float) -> str:
    if abs(x) >= 100:
        return f"${x:,.0f}"
    if abs(x) >= 0.01 or x == 0:
        return f"${x:,.2f}"
    return f"${sig(x, 2)}"


def fmt_duration(s: float) -> str:
    if s < 90:
        return f"{sig(s, 2)} seconds"
    if s < 90 * 60:
        return f"{round(s / 60)} minutes"
    if s < 48 * 3600:
        return f"{sig(s / 3600, 2)} hours"
    return f"{sig(s / 86400, 2)} days"


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
