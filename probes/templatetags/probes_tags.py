from django import template
from django.utils.html import format_html

from probes.models import UNKNOWN

register = template.Library()

LABELS = {
    "up": "up",
    "loading": "loading",
    "down": "down",
    "auth_error": "auth error",
    "model_missing": "model missing",
    "timeout": "timeout",
    "bad_response": "bad response",
    UNKNOWN: "not probed yet",
}


@register.filter
def status_label(status: str) -> str:
    return LABELS.get(status, status)


@register.simple_tag
def status_badge(status: str):
    return format_html(
        '<span class="status status-{}">{}</span>', status, LABELS.get(status, status)
    )


@register.filter
def percent(share: float | None) -> str:
    """0.9987 → "99.87 %"; None → "–" (no probes in the window)."""
    if share is None:
        return "–"
    return f"{share * 100:.2f} %"


@register.filter
def number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    return f"{value:,.{int(digits)}f}"
