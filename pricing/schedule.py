"""Beat entries for prices, imported by settings (no Django imports here)."""

from celery.schedules import crontab

BEAT_SCHEDULE = {
    # Daily: public catalogs change a few times a week; 04:17 UTC misses the hour's rush.
    "pricing-refresh-all": {"task": "pricing.refresh_all", "schedule": crontab(hour=4, minute=17)},
}
