from django.core.management.base import BaseCommand

from pricing.management.commands.refresh_prices import run_summary
from pricing.services import prices_seed
from sizing.models import Accelerator


class Command(BaseCommand):
    help = (
        "Load the seed prices: the article's assumed $2.50 a GPU-hour, Moonshot's kimi-k3 API "
        "prices and the public sample feeds. Safe to run twice."
    )

    def handle(self, *args, **options):
        if not Accelerator.objects.exists():
            self.stderr.write("no accelerators in the catalog: run load_catalog first")
        failed = 0
        for run in prices_seed():
            self.stdout.write(run_summary(run))
            failed += run.status != run.OK
        if failed:
            raise SystemExit(1)
