"""Cross-cutting HTTP behaviour: security headers with a strict CSP, and a clear 503 while the
database is unreachable (a restart, a failover) instead of a 500 traceback page."""

import logging
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template.response import TemplateResponse
from django.views.defaults import server_error as django_server_error

log = logging.getLogger(__name__)

# No inline script anywhere: htmx and plotly.js come from our static files. Plotly sets inline
# style attributes on its SVG, hence 'unsafe-inline' for styles only; data:/blob: for its
# image export.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"
RETRY_AFTER_S = "30"

# Django wraps driver errors raised through a cursor; a few (a health check, a close) come
# straight from the driver.
DATABASE_OUTAGE: tuple[type[BaseException], ...] = (OperationalError, InterfaceError)
try:
    import psycopg

    DATABASE_OUTAGE += (psycopg.OperationalError, psycopg.InterfaceError)
except ImportError:  # pragma: no cover - SQLite-only installs
    pass


def security_headers(get_response):
    def middleware(request):
        response = get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        response.headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        return response

    return middleware


def _error(request, status: int, message: str, field: str = ""):
    if request.path.startswith("/api/"):
        detail = [{"loc": [field] if field else [], "field": field, "msg": message}]
        return JsonResponse({"status": status, "detail": detail}, status=status)
    return HttpResponse(f"{message}\n", status=status, content_type="text/plain; charset=utf-8")


def reject_nul_characters(get_response):
    """PostgreSQL text cannot hold NUL (0x00): refuse it at the door, naming the parameter,
    rather than fail with a 500 when a query reaches the database."""

    def middleware(request):
        for key, values in request.GET.lists():
            if "\x00" in key or any("\x00" in value for value in values):
                return _error(
                    request, 400, f"{key.strip(chr(0))}: NUL characters are not allowed", key
                )
        if "\x00" in request.path:
            return _error(request, 400, "The path holds a NUL character")
        return get_response(request)

    return middleware


def database_unavailable(get_response):
    def middleware(request):
        return get_response(request)

    def process_exception(request, exception):
        if isinstance(exception, ValueError) and "NUL (0x00)" in str(exception):
            # A NUL inside a JSON body or form field, found by the database driver.
            return _error(request, 400, "A text field holds a NUL character, which is not allowed")
        if not isinstance(exception, DATABASE_OUTAGE):
            return None
        return unavailable(request, exception)

    middleware.process_exception = process_exception
    return middleware


def unavailable(request, exception):
    log.error("database unavailable: %s", exception)
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {"status": 503, "detail": [{"loc": [], "msg": "The database is unavailable; "
                                        "retry shortly."}]},
            status=503,
        )  # fmt: skip
    else:
        response = TemplateResponse(request, "503.html", status=503)
        response.render()
    response["Retry-After"] = RETRY_AFTER_S
    return response


def server_error(request, *args, **kwargs):
    """handler500: an outage met outside a view (a session saved by middleware, a lazy query
    in a template) is still the 503 page, not a 500."""
    exception = sys.exc_info()[1]
    if isinstance(exception, DATABASE_OUTAGE):
        return unavailable(request, exception)
    return django_server_error(request, *args, **kwargs)
