"""The refresh tasks through Redis and a real Celery worker, against the test database."""

from pathlib import Path

import pytest
from django.conf import settings

from pricing import tasks
from pricing.models import Feed, FeedRun, GpuPrice

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),  # the worker must see the rows: commit them
    pytest.mark.skipif(
        not settings.CELERY_BROKER_URL,
        reason="CELERY_BROKER_URL is not set: the worker tests need Redis (make test)",
    ),
]


@pytest.fixture
def feeds(catalog, make_feed):
    # The worker reads with the default feed folders: the shipped samples.
    samples = Path("pricing/seed")
    nebius = make_feed(
        "nebius",
        Feed.SKYPILOT_CSV,
        samples / "skypilot" / "nebius_vms_v8_gpu_rows.csv",
        provider="nebius",
    )
    lambda_ = make_feed(
        "lambda",
        Feed.SKYPILOT_CSV,
        samples / "skypilot" / "lambda_vms_v8_gpu_rows.csv",
        provider="lambda",
    )
    make_feed(
        "off", Feed.SKYPILOT_CSV, "tests/data/price-feeds/none.csv", provider="x", enabled=False
    )
    return nebius, lambda_


def test_a_worker_refreshes_one_feed_and_a_second_run_adds_nothing(celery_worker, feeds):
    nebius, _ = feeds

    first = tasks.refresh_feed.delay(nebius.pk).get(timeout=60)
    again = tasks.refresh_feed.delay(nebius.pk).get(timeout=60)

    assert (first["status"], first["added"]) == ("ok", 19)
    assert (again["status"], again["added"]) == ("ok", 0)
    assert GpuPrice.objects.filter(provider__slug="nebius").count() == 19
    assert FeedRun.objects.get(pk=again["run_id"]).prices_unchanged == 19


def test_refresh_all_queues_every_enabled_feed(celery_worker, feeds):
    queued = tasks.refresh_all.delay().get(timeout=60)

    assert sorted(queued) == sorted(f.pk for f in feeds)
    runs = _wait_for_runs(len(feeds))
    assert {r.feed.name: (r.status, r.prices_added) for r in runs} == {
        "nebius": ("ok", 19),
        "lambda": ("ok", 11),
    }


def test_a_failing_feed_is_a_recorded_run_not_a_crashed_task(celery_worker, feeds, settings):
    nebius, _ = feeds
    nebius.location = "pricing/seed/missing.csv"
    nebius.save()

    result = tasks.refresh_feed.delay(nebius.pk).get(timeout=60)

    run = FeedRun.objects.get(pk=result["run_id"])
    assert (run.status, run.prices_added) == ("failed", 0)
    assert "no such file" in run.error
    assert not GpuPrice.objects.exists()


def _wait_for_runs(count: int, timeout_s: float = 60) -> list[FeedRun]:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        runs = list(FeedRun.objects.exclude(status=FeedRun.RUNNING).select_related("feed"))
        if len(runs) >= count:
            return runs
        time.sleep(0.2)
    raise AssertionError(f"only {len(runs)} of {count} runs finished in {timeout_s} s")
