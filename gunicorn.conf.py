"""gunicorn's settings for k3planner, read from the working directory by default (the Procfile's
and the load test's `gunicorn k3planner.wsgi`). Command-line options still win."""

import gc


def post_worker_init(worker):
    """Load what the first request would, then move every object so far out of the garbage
    collector's sight: Django's modules, URLs and templates live as long as the worker, and a
    full collection scanning them paused a worker for 75-120 ms under load."""
    from django.template.loader import get_template
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (imports every view module)
    for name in ("scenarios/builder.html", "scenarios/library.html", "pricing/prices.html"):
        get_template(name)
    gc.collect()
    gc.freeze()
