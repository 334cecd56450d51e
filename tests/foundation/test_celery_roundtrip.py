"""A real task goes through Redis to a worker process started by the test run, and back."""

import pytest

from k3planner.celery import ping


@pytest.mark.integration
def test_it_sends_a_task_through_the_broker_to_a_real_worker(celery_worker):
    result = ping.delay("hello from the test run")

    answer = result.get(timeout=30)

    assert answer["payload"] == "hello from the test run"
    assert answer["hostname"].startswith("k3planner-test-")
    assert celery_worker.poll() is None, "the worker is still running"
