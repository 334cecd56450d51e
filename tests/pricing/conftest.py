"""Fixtures for the price tests: the catalog's accelerators, feed files, a loopback server."""

import contextlib
import datetime as dt
import http.server
import json
import threading
import time
from pathlib import Path

import pytest

from pricing.models import Feed
from sizing.models import Accelerator, LLMModel, WeightFormat

ROOT = Path(__file__).resolve().parents[2]
FEEDS = ROOT / "tests" / "data" / "price-feeds"
TODAY = dt.date(2026, 11, 30)


@pytest.fixture
def catalog(db):
    """The seed catalog's accelerators, and Kimi K3 for API prices to link to."""
    rows = json.loads((ROOT / "sizing" / "catalog" / "accelerators.json").read_text())
    Accelerator.objects.bulk_create(
        [
            Accelerator(
                **{k: v for k, v in r.items() if k != "figures_as_of"},
                figures_as_of=dt.date.fromisoformat(r["figures_as_of"])
                if r.get("figures_as_of")
                else None,
            )
            for r in rows
        ]
    )
    fmt, _ = WeightFormat.objects.get_or_create(name="mxfp4", defaults={"bits_per_weight": 4.25})
    LLMModel.objects.create(name="Kimi K3", slug="kimi-k3", weight_format=fmt)
    return {a.slug: a for a in Accelerator.objects.all()}


@pytest.fixture
def feed_roots(settings, tmp_path):
    """File feeds may be read from the samples, the seed and the test's tmp_path."""
    settings.PRICE_FEED_ROOTS = [FEEDS, ROOT / "pricing" / "seed", tmp_path]
    return tmp_path


@pytest.fixture
def make_feed(db, feed_roots):
    def make(name, format, location, **fields):
        return Feed.objects.create(name=name, format=format, location=str(location), **fields)

    return make


@pytest.fixture
def samples() -> Path:
    """The real public samples (copied from shared/data/price-feeds)."""
    return FEEDS


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict = {}

    def do_GET(self):
        route = self.routes.get(self.path)
        if route is None:
            self.send_error(404)
            return
        status, body, options = route
        if options.get("delay_s"):
            time.sleep(options["delay_s"])
        self.send_response(status)
        length = options.get("content_length", len(body))
        self.send_header("Content-Length", str(length))
        self.send_header("Content-Type", options.get("content_type", "text/plain"))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)
        if options.get("close"):
            self.close_connection = True

    def log_message(self, format, *args):  # keep the test output clean
        pass


@pytest.fixture
def http_feed():
    """A tiny HTTP server on loopback: serve(path, body, status=200, **options) -> URL.

    Options: delay_s (sleep before answering), content_length (claim a longer body than sent,
    as a transfer cut off mid-way does).
    """
    handler = type("Handler", (_Handler,), {"routes": {}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def serve(path: str, body: bytes, status: int = 200, **options) -> str:
        handler.routes[path] = (status, body, {"close": True, **options})
        return f"http://127.0.0.1:{server.server_address[1]}{path}"

    yield serve
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
