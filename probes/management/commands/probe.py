from django.core.management.base import BaseCommand, CommandError

from probes import services
from probes.models import Endpoint


class Command(BaseCommand):
    help = "Probe endpoints now (all enabled ones, or those named) and print what was found."

    def add_arguments(self, parser):
        parser.add_argument("name", nargs="?", help="Endpoint name (in any team).")
        parser.add_argument("--team", help="Team slug, to pick among endpoints of that name.")
        parser.add_argument("--speed", action="store_true", help="Also measure tokens/s.")

    def handle(self, *args, name=None, team=None, speed=False, **options):
        endpoints = Endpoint.objects.select_related("team").order_by("team__slug", "name")
        if team:
            endpoints = endpoints.filter(team__slug=team)
        endpoints = endpoints.filter(name=name) if name else endpoints.filter(enabled=True)
        endpoints = list(endpoints)
        if not endpoints:
            raise CommandError(f"no endpoint named {name!r}" if name else "no enabled endpoints")
        results = services.endpoints_probe(endpoints=endpoints)
        width = max(len(f"{e.team.slug}/{e.name}") for e in endpoints)
        for endpoint, result in zip(endpoints, results, strict=True):
            latency = f"{result.latency_ms:8.1f} ms" if result.latency_ms is not None else " " * 11
            code = result.http_status or "-"
            self.stdout.write(
                f"{endpoint.team.slug + '/' + endpoint.name:<{width}}  {result.status:<13} "
                f"HTTP {code!s:<4} {latency}  {result.error}".rstrip()
            )
            if speed and result.status == "up":
                endpoint.refresh_from_db()
                s = services.endpoint_probe_speed(endpoint=endpoint)
                if s.status == "up":
                    estimate = (
                        f", estimate {s.estimated_tokens_per_s:.1f} (× {s.calibration_factor:.3f})"
                        if s.estimated_tokens_per_s and s.calibration_factor
                        else ""
                    )
                    self.stdout.write(
                        f"{'':<{width}}  speed: {_num(s.tokens_per_s)} tokens/s over "
                        f"{s.concurrency} stream(s), first token {_num(s.ttft_ms, 0)} ms, "
                        f"{s.output_tokens} tokens{estimate}"
                    )
                else:
                    self.stdout.write(f"{'':<{width}}  speed: {s.status} {s.error}".rstrip())


def _num(value, digits: int = 1) -> str:
    return "?" if value is None else f"{value:.{digits}f}"
