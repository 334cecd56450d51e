"""One settings module, read from environment variables (see .env.example).

Default run is embedded: SQLite and Celery tasks run in-process. Set DATABASE_URL and
CELERY_BROKER_URL to run on PostgreSQL, Redis, a Celery worker and beat.
"""

import os
from pathlib import Path

import dj_database_url
import plotly
from django.core.exceptions import ImproperlyConfigured

from pricing.schedule import BEAT_SCHEDULE as PRICING_BEAT_SCHEDULE

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and os.environ.get("K3PLANNER_REQUIRE_SECRET_KEY"):
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    # Fine for a laptop run; production sets SECRET_KEY (manage.py check --deploy says so).
    SECRET_KEY = "insecure-dev-key-set-SECRET_KEY-in-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "ninja",  # serves its Swagger UI from static, not a CDN
    "django_htmx",
    "template_partials",
    "teams",
    "sizing",
    "pricing",
    "probes",
    "scenarios",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "k3planner.middleware.security_headers",
    "k3planner.middleware.reject_nul_characters",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "k3planner.middleware.database_unavailable",
]

ROOT_URLCONF = "k3planner.urls"
WSGI_APPLICATION = "k3planner.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            "builtins": ["django_htmx.templatetags.django_htmx"],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# plotly.js comes from the plotly package we pin, served from our own static (no CDN).
PLOTLY_JS_DIR = Path(plotly.__file__).resolve().parent / "package_data"
STATICFILES_DIRS = [BASE_DIR / "static", ("vendor", PLOTLY_JS_DIR)]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve from the finders in development/tests so no collectstatic step is needed there.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# How long another process may size with a catalog edited elsewhere (see sizing.selectors).
CATALOG_CACHE_SECONDS = env_int("CATALOG_CACHE_SECONDS", 5)
# The prices page's tables, per version of the prices: a new price row shows at once; an edit
# of a provider's or an accelerator's name shows within this.
PRICES_CACHE_SECONDS = env_int("PRICES_CACHE_SECONDS", 300)

# Security. Production behind TLS sets SECURE_SSL=1 for the HTTPS-only flags (`manage.py check
# --deploy` is clean with it); the embedded run and the tests speak plain HTTP on loopback.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SECURE_SSL = env_bool("SECURE_SSL", False)
if SECURE_SSL:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
# Failed sign-ins allowed per username and per address in LOGIN_LOCKOUT_S.
LOGIN_MAX_FAILURES = env_int("LOGIN_MAX_FAILURES", 5)
LOGIN_LOCKOUT_S = env_int("LOGIN_LOCKOUT_S", 900)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# Celery. Without a broker, tasks run in-process (eager): the embedded default run.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL) or None
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 360)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Redis puts a task whose worker died before acknowledging it back on its queue this long after
# delivery (kombu's default: an hour). It must outlast CELERY_TASK_TIME_LIMIT, or a task still
# running would be handed to a second worker.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT_S", 3600)
}
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE: dict = {**PRICING_BEAT_SCHEDULE}  # prices: daily refresh of the feeds

# Price feeds: folders file feeds may be read from (default: the shipped samples), the size
# cap of a fetched file and the seconds allowed between chunks of a download.
PRICE_FEED_ROOTS = env_list("PRICE_FEED_ROOTS", str(BASE_DIR / "pricing" / "seed"))
PRICE_FEED_MAX_BYTES = env_int("PRICE_FEED_MAX_BYTES", 64 * 1024 * 1024)
PRICE_FEED_TIMEOUT_S = env_int("PRICE_FEED_TIMEOUT_S", 30)

# Probes (spec 5). A sweep every PROBES_SWEEP_S probes each endpoint whose interval has come
# round, all at once (at most PROBES_CONCURRENCY in flight); speed probes sweep more slowly.
# Stored endpoint keys are encrypted with ENDPOINT_SECRET_KEY (else one derived from SECRET_KEY).
ENDPOINT_SECRET_KEY = os.environ.get("ENDPOINT_SECRET_KEY", "")
PROBES_SWEEP_S = env_int("PROBES_SWEEP_S", 15)
PROBES_SPEED_SWEEP_S = env_int("PROBES_SPEED_SWEEP_S", 300)
PROBES_CONCURRENCY = env_int("PROBES_CONCURRENCY", 100)
PROBES_WEBHOOK_TIMEOUT_S = env_int("PROBES_WEBHOOK_TIMEOUT_S", 5)
CELERY_BEAT_SCHEDULE["probes-health-sweep"] = {
    "task": "probes.probe_due",
    "schedule": float(PROBES_SWEEP_S),
    "options": {"expires": PROBES_SWEEP_S},  # a sweep queued behind a busy worker is dropped
}
CELERY_BEAT_SCHEDULE["probes-speed-sweep"] = {
    "task": "probes.speed_due",
    "schedule": float(PROBES_SPEED_SWEEP_S),
    "options": {"expires": PROBES_SPEED_SWEEP_S},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
