"""A feed run: matched rows stored once, the rest reported, and every failure changing nothing."""

import datetime as dt
from decimal import Decimal

import pytest

from pricing import selectors, services
from pricing.models import ApiPrice, Feed, FeedRun, GpuPrice, Provider

TODAY = dt.date(2026, 11, 30)
TOMORROW = TODAY + dt.timedelta(days=1)

pytestmark = pytest.mark.usefixtures("catalog")


@pytest.fixture
def aws(make_feed, samples):
    return make_feed(
        "SkyPilot AWS",
        Feed.SKYPILOT_CSV,
        samples / "skypilot" / "aws_vms_v8_gpu_rows.csv",
        provider="aws",
    )


def snapshot():
    """Everything a failed run must leave as it was."""
    return (
        sorted(GpuPrice.objects.values_list("id", "usd_per_gpu_hour", "valid_until")),
        sorted(ApiPrice.objects.values_list("id", "usd_per_m_output", "valid_until")),
        sorted(Provider.objects.values_list("name", flat=True)),
    )


def test_it_stores_a_skypilot_feed_with_unmatched_rows_reported(aws):
    run = services.feed_refresh(feed=aws, today=TODAY)

    assert run.status == FeedRun.OK, run.error
    assert (run.rows_read, run.rows_skipped, run.rows_rejected) == (27, 2, 2)
    assert run.prices_added == 40  # 44 offers less the A100 40GB and B300 rows' two each
    reasons = {r["row"]: r["reason"] for r in run.rejections}
    assert "A100 with 40 GB per GPU is not A100 80GB" in reasons[3]
    assert "B300 is not in the catalog" in reasons[28]
    assert {r["field"] for r in run.rejections} == {"accelerator"}
    assert run.providers_created == ["AWS"]
    price = GpuPrice.objects.get(offer="p5.48xlarge", zone="use1-az1", kind="on_demand")
    assert (price.usd_per_gpu_hour, price.gpu_count, price.accelerator.slug) == (
        Decimal("6.88"),
        8,
        "h100-80gb",
    )
    assert price.effective_date == TODAY
    assert "file undated: dated the day it was read" in price.note
    assert (price.source, price.feed_run, price.valid_until) == ("feed", run, None)


def test_a_second_run_of_the_same_file_adds_nothing(aws):
    first = services.feed_refresh(feed=aws, today=TODAY)
    before = snapshot()

    again = services.feed_refresh(feed=aws, today=TOMORROW)

    assert (again.status, again.prices_added, again.prices_unchanged) == ("ok", 0, 40)
    assert again.rows_rejected == first.rows_rejected == 2
    assert snapshot() == before


def test_a_changed_price_adds_a_dated_row_and_keeps_the_old_one(aws, feed_roots, samples):
    services.feed_refresh(feed=aws, today=TODAY)
    moved = feed_roots / "aws.csv"
    moved.write_text(
        (samples / "skypilot" / "aws_vms_v8_gpu_rows.csv")
        .read_text()
        .replace(",55.04,55.040000,us-east-1,use1-az1,", ",52.00,55.040000,us-east-1,use1-az1,")
    )
    aws.location = str(moved)
    aws.save()

    run = services.feed_refresh(feed=aws, today=TOMORROW)

    assert (run.prices_added, run.prices_unchanged) == (1, 39)
    old, new = GpuPrice.objects.filter(
        offer="p5.48xlarge", zone="use1-az1", kind="on_demand"
    ).order_by("effective_date")
    assert (old.usd_per_gpu_hour, old.valid_until) == (Decimal("6.88"), TOMORROW)
    assert (new.usd_per_gpu_hour, new.effective_date, new.valid_until) == (
        Decimal("6.5"),
        TOMORROW,
        None,
    )
    current = selectors.gpu_prices_current(as_of=TOMORROW, region="us-east-1", kind="on_demand")
    assert Decimal("6.5") in {p.usd_per_gpu_hour for p in current if p.zone == "use1-az1"}
    as_before = selectors.gpu_prices_current(as_of=TODAY, region="us-east-1", kind="on_demand")
    assert {p.usd_per_gpu_hour for p in as_before if p.zone == "use1-az1"} == {Decimal("6.88")}


@pytest.mark.parametrize(
    "path, provider, added, rejected",
    [
        ("skypilot/lambda_vms_v8_gpu_rows.csv", "lambda", 11, 3),  # A6000, 2 × GH200
        ("skypilot/nebius_vms_v8_gpu_rows.csv", "nebius", 19, 0),
        ("skypilot/verda_vms_v8_gpu_rows.csv", "verda", 10, 3),  # 2 × B300, RTX PRO 6000
        ("skypilot/hyperbolic_vms_v8.csv", "hyperbolic", 3, 0),
        ("skypilot/shadeform_vms_v8_rows.csv", "shadeform", 9, 2),  # GAUDI2, RTXPro6000
        ("skypilot/do_vms_v6_rows.csv", "do", 2, 0),
        ("skypilot/gcp_vms_v8_rows.csv", "gcp", 0, 14),
    ],
)
def test_it_stores_every_skypilot_sample(make_feed, samples, path, provider, added, rejected):
    feed = make_feed(provider, Feed.SKYPILOT_CSV, samples / path, provider=provider)

    run = services.feed_refresh(feed=feed, today=TODAY)

    assert run.status == "ok", run.error
    assert (run.prices_added, run.rows_rejected) == (added, rejected), run.rejections


def test_it_stores_a_gpuhunt_price_table(make_feed, samples, catalog):
    feed = make_feed(
        "crusoe",
        Feed.GPUHUNT_CSV,
        samples / "gpuhunt" / "crusoe_gpu_pricing_from_gpuhunt.csv",
        provider="crusoe",
    )

    run = services.feed_refresh(feed=feed, today=TODAY)

    assert run.status == "ok", run.error
    assert run.rows_rejected == 2  # A100 40GB and A40 are not in the catalog
    assert run.prices_added == 12
    crusoe = Provider.objects.get(slug="crusoe")
    assert (crusoe.name, crusoe.kind) == ("Crusoe", "neocloud")
    h100 = selectors.gpu_price_current(
        provider=crusoe, accelerator=catalog["h100-80gb"], as_of=TODAY
    )
    assert h100.usd_per_gpu_hour == Decimal("3.9")


def test_it_names_the_gpuhunt_provider_after_the_file(make_feed, feed_roots, samples):
    catalog_csv = feed_roots / "vastai.csv"
    catalog_csv.write_text(
        "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,"
        "gpu_vendor,flags\n"
        "v1,us,16.0,32,256,8,H100,80.0,False,,nvidia,\n"
        "v1,us,8.0,32,256,8,H100,80.0,True,,nvidia,\n"
        "v2,us,0.9,8,64,1,A10,24.0,False,,nvidia,\n"
    )
    feed = make_feed("vast", Feed.GPUHUNT_CSV, catalog_csv)

    run = services.feed_refresh(feed=feed, today=TODAY)

    assert (run.prices_added, run.rows_rejected) == (2, 1)
    assert run.providers_created == ["Vast.ai"]
    assert set(GpuPrice.objects.values_list("kind", "usd_per_gpu_hour")) == {
        ("on_demand", Decimal("2")),
        ("spot", Decimal("1")),
    }


def test_it_stores_litellm_api_prices_per_million(make_feed, samples):
    feed = make_feed(
        "litellm", Feed.LITELLM_JSON, samples / "litellm" / "model_prices_trimmed.json"
    )

    run = services.feed_refresh(feed=feed, today=TODAY)

    assert (run.status, run.prices_added, run.rows_rejected) == ("ok", 55, 2)
    moonshot = Provider.objects.get(slug="moonshot")
    price = selectors.api_price_current(provider=moonshot, model_id="kimi-k2.5", as_of=TODAY)
    assert (
        price.usd_per_m_input_cache_hit,
        price.usd_per_m_input_cache_miss,
        price.usd_per_m_output,
        price.context_tokens,
    ) == (Decimal("0.1"), Decimal("0.6"), Decimal("3"), 262_144)
    assert Provider.objects.get(slug="together").kind == "api"
    assert services.feed_refresh(feed=feed, today=TOMORROW).prices_added == 0


def test_it_links_an_api_price_to_the_catalog_model_by_its_id(make_feed, feed_roots):
    path = feed_roots / "api.csv"
    path.write_text(
        "provider,model_id,usd_per_m_output,usd_per_m_input_cache_miss,usd_per_m_input_cache_hit\n"
        "Moonshot AI,kimi-k3,15.00,3.00,0.30\n"
        "OpenRouter,moonshotai/kimi-k3,15.50,3.10,\n"
        "OpenRouter,moonshotai/kimi-k3-preview,9.00,2.00,\n"
    )
    run = services.feed_refresh(feed=make_feed("api", Feed.K3PLANNER_CSV, path), today=TODAY)

    assert run.prices_added == 3
    linked = dict(ApiPrice.objects.values_list("model_id", "llm__slug"))
    assert linked == {
        "kimi-k3": "kimi-k3",
        "moonshotai/kimi-k3": "kimi-k3",
        "moonshotai/kimi-k3-preview": None,  # a different model id is not guessed
    }


def test_it_rejects_the_same_offer_listed_twice_at_two_prices(make_feed, feed_roots):
    path = feed_roots / "dupes.csv"
    path.write_text(
        "provider,accelerator,usd_per_gpu_hour,region,offer\n"
        "Acme,h100-80gb,2.00,eu,a\n"
        "Acme,h100-80gb,2.00,eu,a\n"
        "Acme,h100-80gb,2.40,eu,a\n"
    )
    run = services.feed_refresh(feed=make_feed("dupes", Feed.K3PLANNER_CSV, path), today=TODAY)

    assert (run.prices_added, run.prices_unchanged, run.rows_rejected) == (1, 1, 1)
    assert run.rejections == [
        {"row": 4, "field": "", "reason": "the same offer as row 2 with another price"}
    ]


def test_it_rejects_negative_and_absurd_prices_and_keeps_the_rest(make_feed, feed_roots):
    path = feed_roots / "bad.csv"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region,GpuInfo\n"
        "ok.8x,H200,8,40.00,16.00,eu,\n"
        "neg.8x,H200,8,-40.00,,eu,\n"
        "typo.8x,H200,8,4000000,,eu,\n"
        "cheap.1x,L40S,1,1.10,,eu,\n"
    )
    feed = make_feed("bad", Feed.SKYPILOT_CSV, path, provider="acme")

    run = services.feed_refresh(feed=feed, today=TODAY)

    assert run.status == "ok"
    assert (run.prices_added, run.rows_rejected) == (3, 2)
    assert [(r["row"], r["field"]) for r in run.rejections] == [(3, "Price"), (4, "Price")]
    assert "must be positive" in run.rejections[0]["reason"]
    assert "beyond any list price" in run.rejections[1]["reason"]


# --- failures: the run is recorded, the prices are as they were ---------------------------------


@pytest.fixture
def stored(aws):
    services.feed_refresh(feed=aws, today=TODAY)
    return snapshot()


def fail_with(feed, location):
    feed.location = location
    feed.save()
    return services.feed_refresh(feed=feed, today=TOMORROW)


def assert_failed_and_unchanged(run, stored, message):
    assert run.status == FeedRun.FAILED
    assert message in run.error
    assert "nothing was changed" in run.error
    assert (run.prices_added, run.finished_at is not None) == (0, True)
    assert snapshot() == stored


def test_a_truncated_file_changes_nothing(aws, stored, feed_roots, samples):
    data = (samples / "skypilot" / "aws_vms_v8_gpu_rows.csv").read_bytes()
    cut = feed_roots / "cut.csv"
    cut.write_bytes(data[: int(len(data) * 0.7)])

    run = fail_with(aws, str(cut))

    assert_failed_and_unchanged(run, stored, "truncated")


def test_an_http_500_changes_nothing(aws, stored, http_feed):
    run = fail_with(aws, http_feed("/vms.csv", b"upstream exploded", status=500))

    assert_failed_and_unchanged(run, stored, "HTTP 500 from http://127.0.0.1:")


def test_a_timeout_changes_nothing(aws, stored, http_feed, settings):
    settings.PRICE_FEED_TIMEOUT_S = 0.3

    run = fail_with(aws, http_feed("/slow.csv", b"InstanceType\n", delay_s=1.5))

    assert_failed_and_unchanged(run, stored, "timed out after 0.3 s")


def test_a_transfer_cut_off_mid_way_changes_nothing(aws, stored, http_feed, samples):
    data = (samples / "skypilot" / "aws_vms_v8_gpu_rows.csv").read_bytes()

    run = fail_with(aws, http_feed("/cut.csv", data[:3000], content_length=len(data)))

    assert_failed_and_unchanged(run, stored, "could not fetch")


def test_a_file_over_the_size_cap_is_not_read(aws, stored, http_feed, settings):
    settings.PRICE_FEED_MAX_BYTES = 1000

    run = fail_with(aws, http_feed("/big.csv", b"x" * 5000))

    assert_failed_and_unchanged(run, stored, "over the 1,000 cap")


def test_a_file_that_streams_past_the_cap_is_stopped(aws, stored, http_feed, settings):
    settings.PRICE_FEED_MAX_BYTES = 1000

    # No trustworthy Content-Length: the cap is enforced on the bytes as they arrive.
    run = fail_with(aws, http_feed("/liar.csv", b"x" * 5000, content_length=500))

    assert run.status == FeedRun.FAILED
    assert snapshot() == stored


def test_a_served_feed_is_read_like_a_file(aws, http_feed, samples):
    data = (samples / "skypilot" / "aws_vms_v8_gpu_rows.csv").read_bytes()
    url = http_feed("/aws/vms.csv", data)
    aws.location = url
    aws.save()

    run = services.feed_refresh(feed=aws, today=TODAY)

    assert (run.status, run.prices_added) == ("ok", 40)
    assert GpuPrice.objects.filter(source_url=url).count() == 40


@pytest.mark.parametrize(
    "location, message",
    [
        ("tests/data/price-feeds/nope.csv", "no such file"),
        ("/etc/passwd", "outside the feed folders"),
        ("k3planner/settings.py", "outside the feed folders"),
        ("ftp://example.com/vms.csv", "only http(s) URLs and file paths"),
    ],
)
def test_a_missing_or_forbidden_file_changes_nothing(aws, stored, location, message):
    assert_failed_and_unchanged(fail_with(aws, location), stored, message)


def test_a_failure_while_storing_rolls_back_the_rows_already_written(
    make_feed, feed_roots, stored, monkeypatch
):
    path = feed_roots / "both.json"
    path.write_text(
        '{"format": "k3planner-prices", "gpu_prices": [{"provider": "aws", "accelerator": '
        '"h100-80gb", "usd_per_gpu_hour": "1.11"}], "api_prices": [{"provider": "x", "model_id":'
        ' "m", "usd_per_m_output": "1", "usd_per_m_input_cache_miss": "1"}]}'
    )
    real_insert = services._insert

    def insert_then_die(model, rows, **kwargs):
        if model is ApiPrice:  # the GPU rows are in by now
            raise RuntimeError("worker lost")
        return real_insert(model, rows, **kwargs)

    monkeypatch.setattr(services, "_insert", insert_then_die)

    run = services.feed_refresh(feed=make_feed("both", Feed.K3PLANNER_JSON, path), today=TODAY)

    assert_failed_and_unchanged(run, stored, "RuntimeError: worker lost")


def test_a_run_left_running_by_a_dead_worker_is_marked_failed(aws, settings):
    settings.CELERY_TASK_TIME_LIMIT = 60
    from django.utils import timezone

    dead = FeedRun.objects.create(
        feed=aws, label=aws.name, started_at=timezone.now() - dt.timedelta(minutes=5)
    )

    services.feed_refresh(feed=aws, today=TODAY)

    dead.refresh_from_db()
    assert dead.status == FeedRun.FAILED
    assert "did not finish" in dead.error


def test_text_with_tabs_quotes_and_backslashes_is_stored_as_written(make_feed, feed_roots):
    path = feed_roots / "odd.csv"
    note = 'tab\there, "quoted", back\\slash, new\nline, ünïcode'
    path.write_text(
        "provider,accelerator,usd_per_gpu_hour,offer,note\n"
        f'Acme,h200-141gb,3.00,"8x\\h200","{note.replace(chr(34), chr(34) * 2)}"\n'
    )

    run = services.feed_refresh(feed=make_feed("odd", Feed.K3PLANNER_CSV, path), today=TODAY)

    assert run.prices_added == 1, run.rejections
    price = GpuPrice.objects.get()
    assert price.offer == "8x\\h200"
    assert price.note.startswith(note)


def test_by_default_a_file_feed_reads_only_the_shipped_samples(aws, settings):
    del settings.PRICE_FEED_ROOTS  # as deployed, unless the operator adds folders

    refused = services.feed_refresh(feed=aws, today=TODAY)
    aws.location = "pricing/seed/skypilot/aws_vms_v8_gpu_rows.csv"
    aws.save()
    read = services.feed_refresh(feed=aws, today=TODAY)

    assert "outside the feed folders" in refused.error
    assert (read.status, read.prices_added) == ("ok", 40)
