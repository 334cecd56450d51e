from django.core.management.base import BaseCommand

from sizing.services import catalog_load


class Command(BaseCommand):
    help = "Load the seed catalog (models, accelerators, weight formats). Safe to run twice."

    def handle(self, *args, **options):
        report = catalog_load()
        self.stdout.write(
            f"catalog: {len(report.created)} created, {len(report.kept)} already present (kept)"
        )
        for line in report.failed:
            self.stderr.write(f"failed: {line}")
        if report.failed:
            raise SystemExit(1)
