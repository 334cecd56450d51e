"""Cross-cutting HTTP behaviour: security headers with a strict CSP, and a clear 503 while the
database is unreachable (a restart, a failover) instead of a 500 traceback page."""

import logging

from django.db import InterfaceError, OperationalError
from django.http import JsonResponse
from django.template.response import TemplateResponse

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


def security_headers(get_response):
    def middleware(request):
        response = get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        response.headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        return response

    return middleware


def database_unavailable(get_response):
    def middleware(request):
        return get_response(request)

    def process_exception(request, exception):
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        log.error("database unavailable: %s", exception)
        if request.path.startswith("/api/"):
            response = JsonResponse(
                {"status": 503, "detail": [{"loc": [], "msg": "The database is unavailable; "
                                            "retry shortly."}]},
                status=503,
            )  # fmt: skip
        else:
            response = TemplateResponse(request, "503.html", status=503)
        response["Retry-After"] = RETRY_AFTER_S
        return response

    middleware.process_exception = process_exception
    return middleware
