"""The one NinjaAPI: /api/v1/, OpenAPI at /api/v1/openapi.json, docs at /api/v1/docs.

Auth: `Authorization: Bearer <personal token>` for tools, the session for the browser (with
CSRF on unsafe methods). Anonymous callers may read the catalog and prices and run sizing.
Errors are JSON with the status and the field at fault.
"""

from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.security.base import AuthBase
from ninja.utils import check_csrf

from sizing.engine.errors import SizingError
from teams.services import api_token_user


class TokenOrSession(AuthBase):
    """Bearer token, else the session. With `anonymous=True`, nobody at all is let through too."""

    openapi_type = "http"
    openapi_scheme = "bearer"

    def __init__(self, anonymous: bool = False):
        self.anonymous = anonymous
        super().__init__()

    def __call__(self, request):
        header = request.headers.get("Authorization", "")
        if header:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise AuthenticationError(401, "Authorization must be 'Bearer <token>'")
            user = api_token_user(token.strip())
            if user is None:
                raise AuthenticationError(401, "Invalid or revoked API token")
            request.user = user
            return user
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            if request.method not in ("GET", "HEAD", "OPTIONS") and check_csrf(request):
                raise HttpError(403, "CSRF check failed: send the X-CSRFToken header")
            return user
        if self.anonymous:
            request.user = AnonymousUser()
            return request.user  # AnonymousUser is truthy: the operation runs
        return None


token_or_session = TokenOrSession()
anyone = TokenOrSession(anonymous=True)

api = NinjaAPI(
    title="k3planner API",
    version="1",
    urls_namespace="api",
    auth=token_or_session,
    description=__doc__,
)


def error(request, status: int, detail: list[dict] | str):
    if isinstance(detail, str):
        detail = [{"loc": [], "msg": detail}]
    return api.create_response(request, {"status": status, "detail": detail}, status=status)


@api.exception_handler(SizingError)
def on_sizing_error(request, exc: SizingError):
    return error(
        request, 422, [{"loc": exc.field.split("."), "field": exc.field, "msg": exc.reason}]
    )


@api.exception_handler(NinjaValidationError)
def on_validation_error(request, exc: NinjaValidationError):
    detail = []
    for e in exc.errors:
        loc = [str(part) for part in e.get("loc", ())]
        # ("body", "payload", "workload", "context_tokens") -> "workload.context_tokens"
        field = ".".join(p for p in loc if p not in ("body", "query", "path", "payload"))
        detail.append({"loc": loc, "field": field, "msg": e.get("msg", "invalid")})
    return error(request, 422, detail)


@api.exception_handler(DjangoValidationError)
def on_model_validation_error(request, exc: DjangoValidationError):
    if hasattr(exc, "error_dict"):
        detail = [
            {"loc": [field], "field": field, "msg": " ".join(m for e in errs for m in e.messages)}
            for field, errs in exc.error_dict.items()
        ]
    else:
        detail = [{"loc": [], "field": "", "msg": m} for m in exc.messages]
    return error(request, 422, detail)


@api.exception_handler(AuthenticationError)
def on_auth_error(request, exc: AuthenticationError):
    message = str(exc.message) if getattr(exc, "message", None) else "Authentication required"
    if message == "Unauthorized":
        message = "Authentication required: send 'Authorization: Bearer <token>'"
    return error(request, 401, message)


@api.exception_handler(Http404)
def on_not_found(request, exc):
    return error(request, 404, "Not found")


@api.exception_handler(HttpError)
def on_http_error(request, exc: HttpError):
    return error(request, exc.status_code, str(exc.message))


@api.get("/ping", auth=anyone, tags=["meta"])
def ping(request):
    """A trivial JSON view: liveness, and the baseline the sizing benchmark compares with."""
    return {"pong": True}


def _mount_routers() -> None:
    # Imported here: the app routers import `anyone` from this module.
    from pricing.api import router as prices_router
    from probes.api import router as probes_router
    from scenarios.api import router as scenarios_router
    from sizing.api import router as catalog_router

    api.add_router("/", catalog_router)
    api.add_router("/", scenarios_router)
    api.add_router("/", prices_router)
    api.add_router("/", probes_router)


_mount_routers()
