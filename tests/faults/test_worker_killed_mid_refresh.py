"""A Celery worker killed in the middle of a price refresh: the task is acknowledged late, so it
is delivered again, and the feed's prices end up in the tables exactly once.

A run stores everything in one transaction (pricing.services.prices_ingest), so a worker killed
while storing leaves nothing behind; a re-run of the same file adds only what changed, so the
redelivered run stores each price once and a third run adds nothing.
"""

import os
import signal
import time
import uuid
from decimal import Decimal

import pytest
from django.db import connection
from fault_helpers import FileServer, needs_broker, needs_postgres, start_worker, wait_until

from pricing import tasks
from pricing.models import Feed, FeedRun, GpuPrice
from pricing.services import PRICE_LOCK_KEY
from sizing.services import catalog_load

pytestmark = [
    pytest.mark.integration,
    needs_postgres,
    needs_broker,
    pytest.mark.django_db(transaction=True),  # the workers must see the feed: commit it
]

FEED_ROWS = 20_000
ACCELERATORS = ["h100-80gb", "h200-141gb", "b200-192gb", "a100-80gb", "l40s-48gb", "mi300x-192gb"]
# Redis hands an unacknowledged task to another worker this long after delivery (an hour unless
# set): short here so the test sees it.
VISIBILITY_TIMEOUT_S = 5
RESULT_TIMEOUT_S = 180


@pytest.fixture
def big_feed():
    """A k3planner CSV of FEED_ROWS distinct offers, served over HTTP on loopback (a worker
    reads files only from the shipped samples' folder)."""
    catalog_load()
    lines = ["provider,accelerator,usd_per_gpu_hour,region"]
    for i in range(FEED_ROWS):
        price = Decimal(1) + Decimal(i % 1000) / 1000
        lines.append(f"faultcloud,{ACCELERATORS[i % len(ACCELERATORS)]},{price},r{i:05d}")
    with FileServer({"bulk.csv": ("\n".join(lines) + "\n").encode()}) as server:
        yield Feed.objects.create(
            name="bulk", format=Feed.K3PLANNER_CSV, location=server.url("bulk.csv")
        )


@pytest.fixture
def queue():
    return f"k3planner-faults-{uuid.uuid4().hex[:8]}"


def storing_prices() -> bool:
    """A run holds the price tables' advisory lock exactly while it stores (one transaction)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
            " WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()"
            " AND l.classid = %s AND l.objid = %s",
            [PRICE_LOCK_KEY >> 32, PRICE_LOCK_KEY & 0xFFFFFFFF],
        )
        return cursor.fetchone()[0] > 0


def feed_prices(feed: Feed) -> int:
    return GpuPrice.objects.filter(feed_run__feed=feed).count()


def assert_stored_once_and_rerun_adds_nothing(feed: Feed, result: dict, queue: str) -> None:
    run = FeedRun.objects.get(pk=result["run_id"])
    assert (run.status, run.rows_read, run.rows_rejected) == (FeedRun.OK, FEED_ROWS, 0), run.error
    assert run.prices_added == FEED_ROWS
    assert feed_prices(feed) == FEED_ROWS
    assert GpuPrice.objects.filter(valid_until__isnull=True).count() == FEED_ROWS

    again = tasks.refresh_feed.apply_async((feed.pk,), queue=queue).get(timeout=RESULT_TIMEOUT_S)

    assert (again["status"], again["added"]) == ("ok", 0)
    assert FeedRun.objects.get(pk=again["run_id"]).prices_unchanged == FEED_ROWS
    assert feed_prices(feed) == FEED_ROWS


def test_a_worker_killed_while_storing_loses_nothing_and_another_worker_redoes_the_run(
    big_feed, queue
):
    env = {"CELERY_VISIBILITY_TIMEOUT_S": str(VISIBILITY_TIMEOUT_S)}
    first = start_worker(queue, name="doomed", env=env)
    try:
        sent = tasks.refresh_feed.apply_async((big_feed.pk,), queue=queue)
        sent_at = time.monotonic()
        wait_until(storing_prices, 120, "the run to start storing prices", interval_s=0.005)
        first.kill()
        # The killed worker's transaction is rolled back: nothing of the run was stored.
        wait_until(lambda: not storing_prices(), 30, "PostgreSQL to end the dead transaction")
        assert feed_prices(big_feed) == 0
        stranded = FeedRun.objects.get(feed=big_feed)
        assert stranded.status == FeedRun.RUNNING  # the run record says it never finished
    finally:
        first.stop()

    # The task was never acknowledged: once the visibility timeout has passed, a new worker
    # takes it back from Redis without anyone sending it again.
    time.sleep(max(0.0, VISIBILITY_TIMEOUT_S + 1 - (time.monotonic() - sent_at)))
    second = start_worker(queue, name="successor", env=env)
    try:
        result = sent.get(timeout=RESULT_TIMEOUT_S)
        assert result["run_id"] != stranded.pk
        assert_stored_once_and_rerun_adds_nothing(big_feed, result, queue)
    finally:
        second.stop()
    assert sent.id in second.log()  # the same task, redelivered to the new worker


def test_a_pool_process_killed_while_storing_has_its_task_requeued(big_feed, queue):
    worker = start_worker(queue, name="pool")
    try:
        sent = tasks.refresh_feed.apply_async((big_feed.pk,), queue=queue)
        wait_until(storing_prices, 120, "the run to start storing prices", interval_s=0.005)
        [child] = worker.pool_pids()
        os.kill(child, signal.SIGKILL)

        # CELERY_TASK_REJECT_ON_WORKER_LOST: the worker puts the task back on its queue and
        # a fresh pool process runs it again.
        result = sent.get(timeout=RESULT_TIMEOUT_S)

        assert_stored_once_and_rerun_adds_nothing(big_feed, result, queue)
        runs = FeedRun.objects.filter(feed=big_feed).order_by("pk")
        assert [r.status for r in runs] == [FeedRun.RUNNING, FeedRun.OK, FeedRun.OK]
        assert "WorkerLostError" in worker.log()
    finally:
        worker.stop()
