"""A new install gets prices: the article's assumption, Moonshot's API prices, the samples."""

import datetime as dt
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pricing import selectors
from pricing.models import ApiPrice, Feed, FeedRun, GpuPrice, Provider

pytestmark = pytest.mark.usefixtures("catalog")
JUL_20 = dt.date(2026, 7, 20)


def test_it_seeds_the_articles_assumed_rate_clearly_labelled(catalog, capsys):
    call_command("load_prices")

    article = Provider.objects.get(name="Article assumption (July 2026)")
    assert article.kind == "assumption"
    price = selectors.gpu_price_current(
        provider=article, accelerator=catalog["h100-80gb"], as_of=JUL_20
    )
    assert (price.usd_per_gpu_hour, price.effective_date) == (Decimal("2.5"), JUL_20)
    assert price.note.startswith("ASSUMPTION, not a quote")
    assert (
        selectors.gpu_price_current(
            provider=article, accelerator=catalog["h100-80gb"], as_of=JUL_20 - dt.timedelta(1)
        )
        is None
    )
    assert (
        "Article assumption and API prices (July 2026): read 5, added 5" in capsys.readouterr().out
    )


def test_it_seeds_moonshots_kimi_k3_prices_linked_to_the_catalog(catalog):
    call_command("load_prices")

    moonshot = Provider.objects.get(slug="moonshot")
    price = selectors.api_price_current(provider=moonshot, model_id="kimi-k3", as_of=JUL_20)
    assert (
        price.usd_per_m_input_cache_hit,
        price.usd_per_m_input_cache_miss,
        price.usd_per_m_output,
    ) == (Decimal("0.30"), Decimal("3.00"), Decimal("15.00"))
    assert price.llm.slug == "kimi-k3"
    # The LiteLLM snapshot's Moonshot rows join the same provider.
    assert ApiPrice.objects.filter(provider=moonshot, model_id="kimi-k2.5").exists()


def test_it_seeds_the_public_samples_and_says_they_are_undated(catalog):
    call_command("load_prices")

    assert set(Feed.objects.values_list("enabled", flat=True)) == {False}
    assert FeedRun.objects.filter(status="ok").count() == Feed.objects.count() == 10
    aws = GpuPrice.objects.filter(provider__slug="aws").first()
    assert "file undated: dated the day it was read" in aws.note
    assert aws.source_url.startswith("https://github.com/skypilot-org/skypilot-catalog/blob/")
    litellm = ApiPrice.objects.filter(provider__slug="openai").first()
    assert litellm.effective_date == dt.date(2026, 8, 1)
    assert "dated 2026-08-01, when it was observed" in litellm.note
    cheapest = {p.accelerator.slug for p in selectors.gpu_cheapest_offers()}
    assert {"h100-80gb", "h200-141gb", "b200-192gb", "a100-80gb", "l40s-48gb"} <= cheapest


def test_it_is_safe_to_run_twice(catalog, capsys):
    call_command("load_prices")
    counts = (GpuPrice.objects.count(), ApiPrice.objects.count(), Provider.objects.count())

    call_command("load_prices")

    assert (GpuPrice.objects.count(), ApiPrice.objects.count(), Provider.objects.count()) == counts
    assert "added 0" in capsys.readouterr().out.splitlines()[-1]


def test_refresh_prices_runs_the_enabled_feeds_or_one_by_name(make_feed, samples, capsys):
    make_feed(
        "nebius",
        Feed.SKYPILOT_CSV,
        samples / "skypilot" / "nebius_vms_v8_gpu_rows.csv",
        provider="nebius",
    )
    make_feed(
        "off",
        Feed.SKYPILOT_CSV,
        samples / "skypilot" / "do_vms_v6_rows.csv",
        provider="do",
        enabled=False,
    )

    call_command("refresh_prices")
    assert capsys.readouterr().out.strip() == (
        "nebius: read 12, added 19, unchanged 0, rejected 0, skipped 1"
    )
    call_command("refresh_prices", feed="off")
    assert "off: read 3, added 2" in capsys.readouterr().out


def test_refresh_prices_fails_loudly(make_feed):
    make_feed("gone", Feed.SKYPILOT_CSV, "tests/data/price-feeds/gone.csv", provider="x")

    with pytest.raises(CommandError, match="1 of 1 feeds failed"):
        call_command("refresh_prices")
    with pytest.raises(CommandError, match="no feed named 'nope'"):
        call_command("refresh_prices", feed="nope")
