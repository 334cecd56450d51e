import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "k3planner.settings")

app = Celery("k3planner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="k3planner.ping")
def ping(payload: str = "pong") -> dict:
    """A round trip check: a worker answers with its payload and its hostname."""
    return {"payload": payload, "hostname": ping.request.hostname}
