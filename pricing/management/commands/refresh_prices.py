from django.core.management.base import BaseCommand, CommandError

from pricing.models import Feed
from pricing.services import feed_refresh


class Command(BaseCommand):
    help = "Refresh prices from every enabled feed, or from one (--feed NAME, enabled or not)."

    def add_arguments(self, parser):
        parser.add_argument("--feed", help="the feed's name")

    def handle(self, *args, feed=None, **options):
        if feed:
            feeds = list(Feed.objects.filter(name=feed))
            if not feeds:
                raise CommandError(f"no feed named {feed!r}")
        else:
            feeds = list(Feed.objects.filter(enabled=True))
        failed = 0
        for f in feeds:
            run = feed_refresh(feed=f)
            self.stdout.write(run_summary(run))
            failed += run.status != run.OK
        if failed:
            raise CommandError(f"{failed} of {len(feeds)} feeds failed")


def run_summary(run) -> str:
    if run.status == run.OK:
        return (
            f"{run.label}: read {run.rows_read}, added {run.prices_added}, "
            f"unchanged {run.prices_unchanged}, rejected {run.rows_rejected}, "
            f"skipped {run.rows_skipped}"
        )
    return f"{run.label}: FAILED: {run.error}"
