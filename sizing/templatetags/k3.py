"""Display filters. Unknown (None) is always shown as "unknown", never as 0 or blank."""

from django import template
from django.utils.safestring import mark_safe

register = template.Library()

UNKNOWN = mark_safe('<span class="unknown" title="Not published by the vendor">unknown</span>')


@register.filter
def params(value):
    """2_800_000_000_000 -> 2.8T, 104_000_000_000 -> 104B, 7_241_732_096 -> 7.24B."""
    if value is None:
        return UNKNOWN
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return str(value)


@register.filter
def known(value, unit=""):
    if value is None or value == "":
        return UNKNOWN
    if isinstance(value, float):
        value = f"{value:,.10g}"
    elif isinstance(value, int):
        value = f"{value:,}"
    return f"{value} {unit}".strip()


@register.filter
def tb(value):
    """Bytes to decimal TB/GB, the way vendors and the article write them."""
    if value is None:
        return UNKNOWN
    if value >= 1e12:
        return f"{value / 1e12:,.4g} TB"
    return f"{value / 1e9:,.4g} GB"
