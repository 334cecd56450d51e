"""Number filters for the scenario pages, on the engine's formatting. None shows as unknown."""

from django import template

from sizing.engine import fmt
from sizing.templatetags.k3 import UNKNOWN

register = template.Library()

# How to get a figure the engine reported missing (SpeedEstimate.missing, KVEstimate.missing).
HOW_TO_MEASURE = {
    "model.active_params": (
        "Active parameters per token: read them from the model card, or import the model's "
        "config.json so k3planner counts them."
    ),
    "model.experts.params_per_expert": (
        "Parameters per expert: import the model's config.json (moe_intermediate_size), or "
        "give the active parameters from the model card."
    ),
    "accelerator.bandwidth_tb_s": (
        "Memory bandwidth: from the vendor's data sheet, or measured with a bandwidth test "
        "(nvbandwidth, or a probe of a running server)."
    ),
}


def _unknown_or(func):
    def wrapped(value, arg=None):
        if value is None or value == "":
            return UNKNOWN
        return func(value) if arg is None else func(value, arg)

    wrapped.__name__ = func.__name__
    return wrapped


register.filter("usd", _unknown_or(fmt.fmt_usd))
register.filter("tokens", _unknown_or(fmt.fmt_tokens))
register.filter("bytes", _unknown_or(fmt.fmt_bytes))
register.filter("gb", _unknown_or(fmt.fmt_gb))
register.filter("gib", _unknown_or(fmt.fmt_gib))
register.filter("duration", _unknown_or(fmt.fmt_duration))
register.filter("int", _unknown_or(fmt.fmt_int))
register.filter("params", _unknown_or(fmt.fmt_params))


@register.filter
def sig(value, digits=3):
    if value is None:
        return UNKNOWN
    return fmt.sig(value, int(digits))


@register.filter
def pct(value, digits=0):
    if value is None:
        return UNKNOWN
    return f"{value * 100:.{int(digits)}f}%"


@register.filter
def minutes(seconds):
    if seconds is None:
        return UNKNOWN
    return f"{seconds / 60:,.0f} minutes"


@register.filter
def how_to_measure(missing_field: str) -> str:
    if missing_field in HOW_TO_MEASURE:
        return HOW_TO_MEASURE[missing_field]
    if "attention" in missing_field:
        return "An attention dimension the vendor has not published."
    return "Not published."


@register.filter
def errors_text(errors) -> str:
    return " ".join(str(e) for e in errors)
