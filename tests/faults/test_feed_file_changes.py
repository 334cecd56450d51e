"""A price feed file that changes while a refresh reads it: the run stores one whole version of
the file, or fails and changes nothing; the current prices are never a mix of two versions.

A run reads the whole file into memory in one call (pricing.fetch) before it parses anything,
and stores in one transaction; a file cut off mid-row fails the run (pricing.feeds).
"""

import os
import pathlib
import threading
import time
from decimal import Decimal

import pytest

from pricing import fetch, services
from pricing.models import Feed, FeedRun, GpuPrice
from sizing.services import catalog_load

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ROWS = 400
RUNS = 150
WRITER_PAUSE_S = 0.03
ACCELERATORS = ["h100-80gb", "h200-141gb", "b200-192gb", "a100-80gb"]
# Every line is 64 bytes, so a read that stops at a page boundary (4096 bytes) ends on a whole
# row: a half-written file then parses cleanly, which is the case a run must still refuse.
LINE_BYTES = 64
HEADER = "provider,accelerator,usd_per_gpu_hour,region,note".ljust(LINE_BYTES - 1) + "\n"


def version(cents: int, rows: int = ROWS, first: int = 0) -> dict[str, Decimal]:
    """region -> price: every offer of a version has the same price, so a mix shows."""
    return {f"r{i:04d}": Decimal(cents) / 100 for i in range(first, first + rows)}


def csv_bytes(prices: dict[str, Decimal], header: bool = True) -> bytes:
    lines = [
        f"filecloud,{ACCELERATORS[int(region[1:]) % len(ACCELERATORS)]},{price},{region},"
        .ljust(LINE_BYTES - 1, "v") + "\n"
        for region, price in prices.items()
    ]  # fmt: skip
    return ((HEADER if header else "") + "".join(lines)).encode()


A, B = version(250), version(199)
EXTRA = version(250, rows=50, first=ROWS)


@pytest.fixture
def feed(settings, tmp_path):
    catalog_load()
    settings.PRICE_FEED_ROOTS = [tmp_path]
    path = tmp_path / "prices.csv"
    path.write_bytes(csv_bytes(A))
    return Feed.objects.create(name="file", format=Feed.K3PLANNER_CSV, location=str(path))


def current() -> dict[str, Decimal]:
    rows = GpuPrice.objects.filter(valid_until__isnull=True).values_list(
        "region", "usd_per_gpu_hour"
    )
    return {region: price.normalize() for region, price in rows}


def normal(prices: dict[str, Decimal]) -> dict[str, Decimal]:
    return {region: price.normalize() for region, price in prices.items()}


# The ways a file changes under a reader. Plain open() and os calls: a test patches Path.open.
def write(path, data: bytes, mode: str = "wb") -> None:
    with open(path, mode) as f:
        f.write(data)


def replace(path, prices=B) -> None:
    """A new file renamed over the old one (how a careful downloader writes)."""
    write(f"{path}.tmp", csv_bytes(prices))
    os.replace(f"{path}.tmp", path)


def rewrite(path, prices=B) -> None:
    """Truncated and written again in place (how a careless one does)."""
    write(path, csv_bytes(prices))


def append(path) -> None:
    write(path, csv_bytes(EXTRA, header=False), mode="ab")


def truncate(path) -> None:
    os.truncate(path, ROWS // 2 * LINE_BYTES + 15)  # lands inside a row, before its price


def half_written(path) -> None:
    """Truncated and half of B written: a writer caught in the middle of rewriting in place."""
    write(path, csv_bytes(B)[: 64 * LINE_BYTES])


def rest_written(path) -> None:
    write(path, csv_bytes(B)[64 * LINE_BYTES :], mode="ab")


class Reading:
    """An open file that runs `after_read` once its bytes have been read."""

    def __init__(self, handle, after_read):
        self.handle, self.after_read = handle, after_read

    def read(self, *args):
        data = self.handle.read(*args)
        self.after_read()
        return data

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


@pytest.mark.parametrize("change", [replace, rewrite, append, truncate])
def test_a_change_while_parsing_does_not_reach_the_run(feed, monkeypatch, change):
    real_parse = services.feeds.parse

    def parse_while_the_file_changes(format, data, **options):
        change(feed.location)
        return real_parse(format, data, **options)

    monkeypatch.setattr(services.feeds, "parse", parse_while_the_file_changes)

    run = services.feed_refresh(feed=feed)

    # What was read before parsing began is what was stored: version A, whole.
    assert (run.status, run.prices_added) == (FeedRun.OK, ROWS)
    assert current() == normal(A)


def noop(path) -> None:
    pass


@pytest.mark.parametrize(
    "change, after_read, outcome",
    [
        (replace, noop, A),  # the open file is still the old one: all of A
        (rewrite, noop, B),  # all of B was written before the read began
        (append, noop, {**A, **EXTRA}),  # the file as it stood once the rows were added
        (truncate, noop, "truncated"),  # cut inside a row
        (half_written, rest_written, "changed while it was read"),  # 64 whole rows of B read
    ],
)
def test_a_change_between_open_and_read_gives_one_version_or_a_failed_run(
    feed, monkeypatch, change, after_read, outcome
):
    real_open = pathlib.Path.open

    def open_then_change(self, *args, **kwargs):
        handle = real_open(self, *args, **kwargs)
        if str(self) != feed.location:
            return handle
        change(self)
        return Reading(handle, lambda: after_read(self))

    monkeypatch.setattr(pathlib.Path, "open", open_then_change)

    run = services.feed_refresh(feed=feed)

    if isinstance(outcome, str):
        assert (run.status, run.prices_added) == (FeedRun.FAILED, 0)
        assert outcome in run.error
        assert current() == {}
    else:
        assert run.status == FeedRun.OK, run.error
        assert current() == normal(outcome)


@pytest.mark.parametrize("writer", [replace, rewrite])
def test_a_file_rewritten_over_and_over_never_leaves_a_mix(feed, writer, monkeypatch):
    """A writer flips the file between A and B every few milliseconds while refreshes run.

    Written in place, a read can land inside a write and see whole rows of a half-written
    file; before pricing.fetch checked for that, a few runs in a thousand stored them."""
    monkeypatch.setattr(fetch, "SETTLE_S", 0.02)  # shorter than the writer's pause: runs pass
    stop = threading.Event()
    writes = [0]

    def keep_writing():
        while not stop.is_set():
            writer(feed.location, (A, B)[writes[0] % 2])
            writes[0] += 1
            time.sleep(WRITER_PAUSE_S)

    thread = threading.Thread(target=keep_writing, daemon=True)
    thread.start()
    outcomes = []
    try:
        for _ in range(RUNS):
            before = current()
            run = services.feed_refresh(feed=feed)
            after = current()
            if run.status == FeedRun.OK:
                assert after in (normal(A), normal(B)), f"run {run.pk} left a mix"
                outcomes.append("stored one version")
            else:
                assert after == before, f"failed run {run.pk} changed prices"
                outcomes.append(run.error.split(";")[0].split(":")[0])
    finally:
        stop.set()
        thread.join(timeout=10)
    assert writes[0] > 20, "the writer hardly ran: nothing was tested"
    assert "stored one version" in outcomes, outcomes
