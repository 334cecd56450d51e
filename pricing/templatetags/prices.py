from decimal import Decimal

from django import template

register = template.Library()


@register.filter
def usd(value):
    """2.5 -> '2.50', 2.744705 -> '2.744705', 0.003625 -> '0.003625': cents always, and every
    digit a feed gave beyond them (stored prices have 6 decimal places)."""
    if value is None or value == "":
        return ""
    number = Decimal(value).quantize(Decimal("0.000001"))
    text = f"{number:,f}".rstrip("0")
    whole, _, cents = text.partition(".")
    return f"{whole}.{cents.ljust(2, '0')}"
