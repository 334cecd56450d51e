"""Current as of a date, cheapest per accelerator, history: right answers, one query each."""

import datetime as dt
from decimal import Decimal

import pytest

from pricing import selectors, services
from pricing.models import ApiPrice, GpuPrice, Provider

JUL_1, JUL_20, AUG_1, SEP_1 = (dt.date(2026, m, d) for m, d in ((7, 1), (7, 20), (8, 1), (9, 1)))

pytestmark = pytest.mark.usefixtures("catalog")


@pytest.fixture
def acme(db):
    return Provider.objects.create(name="Acme Cloud", slug="acme")


@pytest.fixture
def bolt(db):
    return Provider.objects.create(name="Bolt GPU", slug="bolt", kind="neocloud")


@pytest.fixture
def record(catalog):
    def record(provider, usd, on, accelerator="h100-80gb", kind="on_demand", region="", **more):
        price = GpuPrice(
            provider=provider,
            accelerator=catalog[accelerator],
            kind=kind,
            region=region,
            usd_per_gpu_hour=Decimal(usd),
            effective_date=on,
            **more,
        )
        return services.gpu_price_record(price=price)

    return record


def current(provider, accelerator, on, kind="on_demand", region=""):
    price = selectors.gpu_price_current(
        provider=provider, accelerator=accelerator, kind=kind, region=region, as_of=on
    )
    return price and price.usd_per_gpu_hour


def test_the_current_price_is_the_newest_row_on_or_before_the_date(acme, record, catalog):
    h100 = catalog["h100-80gb"]
    record(acme, "3.00", JUL_1)
    record(acme, "2.50", AUG_1)

    assert current(acme, h100, dt.date(2026, 6, 30)) is None
    assert current(acme, h100, JUL_1) == Decimal("3")
    assert current(acme, h100, JUL_20) == Decimal("3")
    assert current(acme, h100, AUG_1) == Decimal("2.5")
    assert current(acme, h100, SEP_1) == Decimal("2.5")


def test_a_same_day_correction_replaces_the_row_for_every_date(acme, record, catalog):
    h100 = catalog["h100-80gb"]
    wrong = record(acme, "25.00", JUL_1)
    record(acme, "2.50", JUL_1, corrects=wrong)

    assert current(acme, h100, JUL_1) == current(acme, h100, SEP_1) == Decimal("2.5")
    wrong.refresh_from_db()
    assert wrong.valid_until == JUL_1  # kept as history, current on no date
    assert [p.usd_per_gpu_hour for p in selectors.gpu_price_history(accelerator=h100)] == [
        Decimal("25"),
        Decimal("2.5"),
    ]


def test_a_backdated_row_slots_into_the_history(acme, record, catalog):
    h100 = catalog["h100-80gb"]
    record(acme, "3.00", JUL_1)
    record(acme, "2.00", SEP_1)
    record(acme, "2.50", AUG_1)  # learnt late

    assert [current(acme, h100, d) for d in (JUL_20, AUG_1, SEP_1)] == [
        Decimal("3"),
        Decimal("2.5"),
        Decimal("2"),
    ]
    record(acme, "3.50", dt.date(2026, 6, 1))  # before the first row
    assert current(acme, h100, dt.date(2026, 6, 15)) == Decimal("3.5")
    assert current(acme, h100, JUL_1) == Decimal("3")
    assert services.price_intervals_rebuild() == 0  # the intervals were right all along


def test_a_future_dated_price_is_not_current_yet(acme, record, catalog):
    h100 = catalog["h100-80gb"]
    record(acme, "3.00", JUL_1)
    record(acme, "2.00", SEP_1)  # announced

    assert current(acme, h100, AUG_1) == Decimal("3")
    cheapest = selectors.gpu_cheapest_offers(as_of=AUG_1)
    assert [p.usd_per_gpu_hour for p in cheapest] == [Decimal("3")]


def test_one_key_holds_several_offers_and_the_cheapest_is_returned(acme, record, catalog):
    record(acme, "4.29", JUL_1, region="us-east-1", offer="sxm5")
    record(acme, "3.29", JUL_1, region="us-east-1", offer="pcie")
    record(acme, "1.99", JUL_1, region="eu-west-1", offer="pcie")
    record(acme, "1.10", JUL_1, region="us-east-1", offer="pcie", kind="spot")

    price = selectors.gpu_price_current(
        provider=acme, accelerator=catalog["h100-80gb"], region="us-east-1", as_of=AUG_1
    )

    assert (price.offer, price.usd_per_gpu_hour) == ("pcie", Decimal("3.29"))
    offers = selectors.gpu_prices_current(
        provider=acme, accelerator=catalog["h100-80gb"], region="us-east-1", as_of=AUG_1
    )
    assert [p.usd_per_gpu_hour for p in offers] == [
        Decimal("1.1"),
        Decimal("3.29"),
        Decimal("4.29"),
    ]


def test_the_cheapest_offer_per_accelerator_ignores_superseded_and_other_kinds(
    acme, bolt, record, catalog
):
    record(acme, "1.00", JUL_1)  # cheap, but superseded on Aug 1
    record(acme, "3.00", AUG_1)
    record(bolt, "2.20", JUL_1)
    record(bolt, "0.90", JUL_1, kind="spot")
    record(acme, "4.10", JUL_1, accelerator="b200-192gb")
    record(bolt, "3.90", JUL_1, accelerator="b200-192gb")

    today = selectors.gpu_cheapest_offers(as_of=SEP_1)
    in_july = selectors.gpu_cheapest_offers(as_of=JUL_20)
    spot = selectors.gpu_cheapest_offers(as_of=SEP_1, kind="spot")

    assert [(p.accelerator.slug, p.provider.slug, p.usd_per_gpu_hour) for p in today] == [
        ("b200-192gb", "bolt", Decimal("3.9")),
        ("h100-80gb", "bolt", Decimal("2.2")),
    ]
    assert {p.accelerator.slug: p.usd_per_gpu_hour for p in in_july}["h100-80gb"] == Decimal("1")
    assert [(p.provider.slug, p.usd_per_gpu_hour) for p in spot] == [("bolt", Decimal("0.9"))]


def test_history_is_oldest_first_and_filters_by_key(acme, bolt, record, catalog):
    h100 = catalog["h100-80gb"]
    record(acme, "3.00", JUL_1, region="eu")
    record(acme, "2.50", AUG_1, region="eu")
    record(acme, "2.60", AUG_1, region="us")
    record(bolt, "2.20", JUL_20, region="eu")

    history = selectors.gpu_price_history(accelerator=h100, provider=acme, region="eu")

    assert [(p.effective_date, p.usd_per_gpu_hour) for p in history] == [
        (JUL_1, Decimal("3")),
        (AUG_1, Decimal("2.5")),
    ]
    assert len(selectors.gpu_price_history(accelerator=h100, since=JUL_20)) == 3


def test_api_prices_are_current_as_of_a_date(acme):
    for on, output in ((JUL_1, "15.00"), (SEP_1, "12.00")):
        services.api_price_record(
            price=ApiPrice(
                provider=acme,
                model_id="kimi-k3",
                usd_per_m_input_cache_hit=Decimal("0.30"),
                usd_per_m_input_cache_miss=Decimal("3.00"),
                usd_per_m_output=Decimal(output),
                effective_date=on,
            )
        )

    in_aug = selectors.api_price_current(provider=acme, model_id="kimi-k3", as_of=AUG_1)
    in_sep = selectors.api_price_current(provider=acme, model_id="kimi-k3", as_of=SEP_1)

    assert (in_aug.usd_per_m_output, in_sep.usd_per_m_output) == (Decimal("15"), Decimal("12"))
    assert (
        selectors.api_price_current(
            provider=acme, model_id="kimi-k3", as_of=JUL_1 - dt.timedelta(1)
        )
        is None
    )
    assert [
        p.usd_per_m_output for p in selectors.api_price_history(provider=acme, model_id="kimi-k3")
    ] == [
        Decimal("15"),
        Decimal("12"),
    ]


@pytest.mark.parametrize(
    "name, call",
    [
        ("gpu_prices_current", lambda ctx: list(selectors.gpu_prices_current(as_of=SEP_1))),
        (
            "gpu_price_current",
            lambda ctx: selectors.gpu_price_current(
                provider=ctx["acme"], accelerator=ctx["h100"], region="eu", as_of=SEP_1
            ),
        ),
        ("gpu_cheapest_offers", lambda ctx: selectors.gpu_cheapest_offers(as_of=SEP_1)),
        (
            "gpu_price_history",
            lambda ctx: list(selectors.gpu_price_history(accelerator=ctx["h100"])),
        ),
        ("api_prices_current", lambda ctx: list(selectors.api_prices_current(as_of=SEP_1))),
        (
            "api_price_current",
            lambda ctx: selectors.api_price_current(
                provider=ctx["acme"], model_id="kimi-k3", as_of=SEP_1
            ),
        ),
        (
            "api_price_history",
            lambda ctx: list(selectors.api_price_history(provider=ctx["acme"], model_id="kimi-k3")),
        ),
    ],
)
def test_each_selector_is_one_query_whatever_the_rows(
    name, call, acme, bolt, record, catalog, django_assert_num_queries
):
    for provider in (acme, bolt):
        for slug in ("h100-80gb", "h200-141gb", "b200-192gb"):
            for on, usd in ((JUL_1, "3"), (AUG_1, "2.5"), (SEP_1, "2.4")):
                for region in ("eu", "us"):
                    record(provider, usd, on, accelerator=slug, region=region)
                    record(provider, usd, on, accelerator=slug, region=region, kind="spot")
        for on in (JUL_1, AUG_1):
            services.api_price_record(
                price=ApiPrice(
                    provider=provider,
                    model_id="kimi-k3",
                    usd_per_m_input_cache_miss=Decimal(3),
                    usd_per_m_output=Decimal(15),
                    effective_date=on,
                )
            )
    ctx = {"acme": acme, "h100": catalog["h100-80gb"]}

    with django_assert_num_queries(1):
        result = call(ctx)
        # Reading what the pages read must not query again (select_related).
        for row in result if isinstance(result, list) else [result]:
            str(row.provider.name)
            getattr(row, "accelerator", None)


def test_rebuilding_the_intervals_after_service_writes_changes_nothing(acme, bolt, record):
    for provider in (acme, bolt):
        for on, usd in ((SEP_1, "2"), (JUL_1, "3"), (AUG_1, "2.5"), (AUG_1, "2.4")):
            record(provider, usd, on)
    GpuPrice.objects.filter(provider=acme).update(valid_until=None)  # as a raw bulk load leaves

    assert services.price_intervals_rebuild() == 3
    assert services.price_intervals_rebuild() == 0
    assert [
        (p.effective_date, p.valid_until)
        for p in GpuPrice.objects.filter(provider=acme).order_by("effective_date", "id")
    ] == [(JUL_1, AUG_1), (AUG_1, AUG_1), (AUG_1, SEP_1), (SEP_1, None)]


def test_an_assumed_rate_is_not_the_cheapest_offer_unless_asked_for(acme, record, catalog):
    article = Provider.objects.create(name="Article assumption", slug="article", kind="assumption")
    record(article, "2.50", JUL_1)
    record(article, "2.50", JUL_1, accelerator="gb300-288gb")
    record(acme, "3.10", JUL_1)

    offers = selectors.gpu_cheapest_offers(as_of=AUG_1)
    with_assumptions = selectors.gpu_cheapest_offers(as_of=AUG_1, include_assumptions=True)

    assert [(p.accelerator.slug, p.provider.slug) for p in offers] == [("h100-80gb", "acme")]
    assert {(p.accelerator.slug, p.provider.slug) for p in with_assumptions} == {
        ("h100-80gb", "article"),
        ("gb300-288gb", "article"),
    }
