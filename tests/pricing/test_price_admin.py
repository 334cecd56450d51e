"""Sam keeps prices current in the admin: adds, corrects (a new row), imports, runs feeds."""

import datetime as dt
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from pricing import selectors, services
from pricing.models import Feed, FeedRun, GpuPrice, Provider

pytestmark = pytest.mark.usefixtures("catalog")


@pytest.fixture
def acme(db):
    return Provider.objects.create(name="Acme Cloud", slug="acme")


@pytest.fixture
def sam_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def listed(acme, catalog):
    """A feed's price, a week old."""
    return services.gpu_price_record(
        price=GpuPrice(
            provider=acme,
            accelerator=catalog["h100-80gb"],
            region="eu-west",
            gpu_count=8,
            offer="acme-8x",
            usd_per_gpu_hour=Decimal("2.90"),
            effective_date=timezone.localdate() - dt.timedelta(days=7),
        ),
        source="feed",
    )


def add_data(acme, accelerator, **overrides):
    return {
        "provider": acme.pk,
        "accelerator": accelerator.pk,
        "kind": "on_demand",
        "term_months": 0,
        "region": "eu-west",
        "zone": "",
        "gpu_count": 8,
        "offer": "acme-8x",
        "usd_per_gpu_hour": "2.75",
        "effective_date": timezone.localdate().isoformat(),
        "source_url": "https://acme.example/pricing",
        "note": "from the sales call",
        "corrects": "",
        **overrides,
    }


def test_staff_add_a_price_as_a_new_dated_row_with_who_and_when(sam_client, staff, acme, catalog):
    response = sam_client.post(
        reverse("admin:pricing_gpuprice_add"), add_data(acme, catalog["h100-80gb"])
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    price = GpuPrice.objects.get()
    assert (price.source, price.entered_by, price.valid_until) == ("admin", staff, None)
    assert price.usd_per_gpu_hour == Decimal("2.75")
    assert (timezone.now() - price.created_at).total_seconds() < 60


def test_staff_correct_a_price_and_both_rows_stay(sam_client, staff, listed, acme, catalog):
    page = sam_client.get(reverse("admin:pricing_gpuprice_change", args=[listed.pk]))
    assert "Correct this price" in page.content.decode()
    add_url = reverse("admin:pricing_gpuprice_add")
    link = f"{add_url}?"
    assert link in page.content.decode()

    form = sam_client.get(add_url, {"offer": "acme-8x", "corrects": listed.pk, "region": "eu-west"})
    assert 'value="acme-8x"' in form.content.decode()

    response = sam_client.post(
        add_url,
        add_data(
            acme,
            catalog["h100-80gb"],
            usd_per_gpu_hour="2.40",
            effective_date=listed.effective_date.isoformat(),
            corrects=listed.pk,
        ),
    )

    assert response.status_code == 302
    correction = GpuPrice.objects.exclude(pk=listed.pk).get()
    assert (correction.corrects, correction.entered_by) == (listed, staff)
    listed.refresh_from_db()
    assert listed.usd_per_gpu_hour == Decimal("2.9")  # never edited in place
    assert listed.valid_until == listed.effective_date  # current on no date any more
    now = selectors.gpu_price_current(
        provider=acme, accelerator=catalog["h100-80gb"], region="eu-west"
    )
    assert now == correction
    history = selectors.gpu_price_history(accelerator=catalog["h100-80gb"])
    assert [p.usd_per_gpu_hour for p in history] == [Decimal("2.9"), Decimal("2.4")]


def test_a_price_cannot_be_edited_or_deleted(sam_client, listed):
    change = sam_client.post(
        reverse("admin:pricing_gpuprice_change", args=[listed.pk]), {"usd_per_gpu_hour": "9"}
    )
    delete = sam_client.post(
        reverse("admin:pricing_gpuprice_delete", args=[listed.pk]), {"post": "yes"}
    )

    assert change.status_code == 403
    assert delete.status_code == 403
    listed.refresh_from_db()
    assert listed.usd_per_gpu_hour == Decimal("2.9")


def test_the_price_list_filters_by_provider_accelerator_kind_and_date(
    sam_client, listed, acme, catalog
):
    Provider.objects.create(name="Bolt GPU", slug="bolt")  # a filter shows with two choices
    url = reverse("admin:pricing_gpuprice_changelist")
    page = sam_client.get(
        url,
        {
            "provider__id__exact": acme.pk,
            "accelerator__id__exact": catalog["h100-80gb"].pk,
            "kind__exact": "on_demand",
            "effective_date__gte": (listed.effective_date - dt.timedelta(days=1)).isoformat(),
            "current": "yes",
        },
    )

    body = page.content.decode()
    assert page.status_code == 200
    for title in ("provider", "accelerator", "kind", "effective date", "current"):
        assert f'data-filter-title="{title}"' in body
    assert "acme-8x" in body
    assert "Import a price file" in body
    empty = sam_client.get(url, {"kind__exact": "spot"})
    assert "acme-8x" not in empty.content.decode()


def test_staff_import_a_csv_through_the_feed_parser(sam_client, staff, catalog):
    upload = SimpleUploadedFile(
        "acme.csv",
        b"provider,accelerator,usd_per_gpu_hour,region,gpu_count,offer\n"
        b"Acme Cloud,h200-141gb,3.10,eu,8,acme-h200-8x\n"
        b"Acme Cloud,GH200,2.00,eu,1,acme-gh200\n",
        content_type="text/csv",
    )

    response = sam_client.post(
        reverse("admin:pricing_prices_import"),
        {"file": upload, "format": Feed.K3PLANNER_CSV, "provider": ""},
    )

    run = FeedRun.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("admin:pricing_feedrun_change", args=[run.pk])
    assert (run.status, run.prices_added, run.rows_rejected, run.triggered_by) == (
        "ok",
        1,
        1,
        staff,
    )
    price = GpuPrice.objects.get()
    assert (price.source, price.entered_by, price.accelerator.slug) == (
        "admin",
        staff,
        "h200-141gb",
    )
    log = sam_client.get(response.url).content.decode()
    assert "GH200 is not in the catalog" in log


def test_an_import_of_a_bad_file_stores_nothing(sam_client, listed, samples):
    data = (samples / "skypilot" / "aws_vms_v8_gpu_rows.csv").read_bytes()
    upload = SimpleUploadedFile("aws.csv", data[:2500], content_type="text/csv")

    sam_client.post(
        reverse("admin:pricing_prices_import"),
        {"file": upload, "format": Feed.SKYPILOT_CSV, "provider": "aws"},
    )

    run = FeedRun.objects.get()
    assert run.status == "failed"
    assert "truncated" in run.error
    assert list(GpuPrice.objects.all()) == [listed]


def test_staff_run_a_feed_from_the_admin_and_read_its_log(sam_client, staff, make_feed, samples):
    feed = make_feed(
        "Lambda",
        Feed.SKYPILOT_CSV,
        samples / "skypilot" / "lambda_vms_v8_gpu_rows.csv",
        provider="lambda",
    )

    response = sam_client.post(
        reverse("admin:pricing_feed_changelist"),
        {"action": "run_now", "_selected_action": [feed.pk]},
        follow=True,
    )

    run = FeedRun.objects.get(feed=feed)
    assert run.triggered_by == staff
    body = response.content.decode()
    assert "Lambda: read 15, added 11, unchanged 0, rejected 3" in body
    assert "run log" in body
    log = sam_client.get(reverse("admin:pricing_feedrun_change", args=[run.pk])).content.decode()
    assert "GH200 is not in the catalog" in log
    assert "A6000 is not in the catalog" in log
    listing = sam_client.get(reverse("admin:pricing_feed_changelist")).content.decode()
    assert "ok 20" in listing  # the last run, linked


def test_someone_who_is_not_staff_cannot_reach_the_price_admin(client, alice):
    client.force_login(alice)

    for name in ("admin:pricing_gpuprice_add", "admin:pricing_prices_import"):
        response = client.get(reverse(name))
        assert response.status_code == 302
        assert "/admin/login/" in response.url
