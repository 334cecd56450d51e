"""Thin tasks: load the feed, call the service. Time limits and acks come from settings."""

from celery import shared_task

from pricing import services
from pricing.models import Feed


@shared_task(name="pricing.refresh_feed")
def refresh_feed(feed_id: int) -> dict:
    """Refresh one feed; the outcome (failures included) is its FeedRun."""
    run = services.feed_refresh(feed=Feed.objects.get(pk=feed_id))
    return {"feed_id": feed_id, "run_id": run.pk, "status": run.status, "added": run.prices_added}


@shared_task(name="pricing.refresh_all")
def refresh_all() -> list[int]:
    """Queue a refresh of every enabled feed; returns their ids."""
    feed_ids = list(Feed.objects.filter(enabled=True).values_list("pk", flat=True))
    for feed_id in feed_ids:
        refresh_feed.delay(feed_id)
    return feed_ids
