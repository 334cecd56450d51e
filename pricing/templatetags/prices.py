from decimal import Decimal
from urllib.parse import urlencode

from django import template

from pricing.models import GpuPrice

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


@register.filter
def kind_label(value):
    """'spot' -> 'Spot': the label a price kind has in the filter."""
    return dict(GpuPrice.KINDS).get(value, value)


@register.simple_tag
def offers_query(accelerator_slug, kind=None, page=None):
    """The query string of one accelerator's offers, the kind filter kept, at a page."""
    params = {"accelerator": accelerator_slug}
    if kind:
        params["kind"] = kind
    if page and page != 1:
        params["page"] = page
    return urlencode(params)
