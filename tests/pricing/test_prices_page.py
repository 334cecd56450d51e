"""The prices page: current prices per accelerator, the cheapest marked, ages, history charts."""

import datetime as dt
import json
import re
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from pricing import feeds, services
from pricing.models import ApiPrice, GpuPrice, Provider

pytestmark = pytest.mark.usefixtures("catalog")


@pytest.fixture
def prices(catalog):
    today = timezone.localdate()
    acme = Provider.objects.create(name="Acme Cloud", slug="acme")
    bolt = Provider.objects.create(name="Bolt GPU", slug="bolt", kind="neocloud")
    article = Provider.objects.create(
        name="Article assumption (July 2026)", slug="article", kind="assumption"
    )

    def gpu(provider, usd, days_ago, accelerator="h100-80gb", **more):
        services.gpu_price_record(
            price=GpuPrice(
                provider=provider,
                accelerator=catalog[accelerator],
                usd_per_gpu_hour=Decimal(usd),
                effective_date=today - dt.timedelta(days=days_ago),
                **more,
            ),
            source="feed",
        )

    gpu(acme, "3.40", 90, offer="acme-8x")
    gpu(acme, "2.95", 3, offer="acme-8x")  # the move the chart shows
    gpu(bolt, "2.10", 45, offer="bolt-1x")  # the cheapest, and stale
    gpu(bolt, "1.20", 45, offer="bolt-1x", kind="spot")
    gpu(article, "2.50", 130, offer="assumed rate")
    gpu(acme, "4.10", 10, accelerator="b200-192gb", offer="acme-b200")
    services.api_price_record(
        price=ApiPrice(
            provider=Provider.objects.create(name="Moonshot AI", slug="moonshot", kind="api"),
            model_id="kimi-k3",
            llm=None,
            usd_per_m_input_cache_hit=Decimal("0.30"),
            usd_per_m_input_cache_miss=Decimal("3.00"),
            usd_per_m_output=Decimal("15.00"),
            effective_date=dt.date(2026, 7, 20),
        )
    )
    return today


def rows_of(body, accelerator_slug):
    section = body.split(f'id="acc-{accelerator_slug}"')[1].split("</table>")[0]
    return re.findall(r"<tr class=\"([^\"]*)\">(.*?)</tr>", section, re.S)


def test_it_lists_current_prices_per_accelerator_with_the_cheapest_marked(client, prices):
    response = client.get(reverse("prices"))

    body = response.content.decode()
    assert response.status_code == 200
    rows = rows_of(body, "h100-80gb")
    assert len(rows) == 4  # Acme's old $3.40 is history, not a current offer
    cheapest = [cells for css, cells in rows if css == "cheapest"]
    assert len(cheapest) == 1
    assert "Bolt GPU" in cheapest[0] and "2.10" in cheapest[0]
    assert "3.40" not in "".join(cells for _, cells in rows)
    assert "assumption</span>" in body  # the article's rate says it is not a quote
    assert "kimi-k3" in body and "15.00" in body


def test_it_shows_how_old_each_price_is(client, prices):
    body = client.get(reverse("prices")).content.decode()

    cells = "".join(cells for _, cells in rows_of(body, "h100-80gb"))
    assert re.search(r'<td class="num" title="3 days old, since [0-9-]{10}">3</td>', cells)
    assert re.search(r'<td class="num stale"[^>]*>45</td>', cells)  # older than 30 days
    assert re.search(r'<td class="num stale"[^>]*>130</td>', cells)


def test_it_embeds_a_history_chart_per_accelerator_with_a_line_per_provider(client, prices):
    body = client.get(reverse("prices")).content.decode()

    script = re.search(
        r'<script id="price-history-h100-80gb" type="application/json">(.*?)</script>', body, re.S
    )
    figure = json.loads(script.group(1))
    traces = {t["name"]: t for t in figure["data"]}
    assert set(traces) == {"Acme Cloud", "Bolt GPU", "Article assumption (July 2026)"}
    assert traces["Acme Cloud"]["y"] == [3.4, 2.95, 2.95]  # the step down, held to today
    assert traces["Acme Cloud"]["line"] == {"shape": "hv"}
    assert 'data-plotly="price-history-h100-80gb"' in body
    assert 'data-plotly="price-history-b200-192gb"' in body
    assert "/static/vendor/plotly.min.js" in body
    assert "/static/js/charts.js" in body
    assert "cdn" not in body.lower()


def test_the_filter_swaps_only_the_offers_region_for_htmx(client, prices):
    response = client.get(
        reverse("prices"), {"accelerator": "b200-192gb"}, headers={"HX-Request": "true"}
    )

    body = response.content.decode()
    assert body.lstrip().startswith('<div id="offers">')
    assert "<html" not in body
    assert 'id="acc-b200-192gb"' in body and 'id="acc-h100-80gb"' not in body
    assert 'data-plotly="price-history-b200-192gb"' in body


def test_the_filter_has_a_plain_link_too(client, prices):
    body = client.get(reverse("prices"), {"kind": "spot"}).content.decode()

    assert len(rows_of(body, "h100-80gb")) == 1
    assert 'href="?accelerator=h100-80gb"' in body


def test_the_page_takes_a_fixed_number_of_queries(client, prices, django_assert_max_num_queries):
    with django_assert_max_num_queries(10):
        client.get(reverse("prices"))
    with django_assert_max_num_queries(4):  # the tables come from the cache
        client.get(reverse("prices"))


def test_a_new_price_shows_at_once_though_the_tables_are_cached(client, catalog, prices):
    before = client.get(reverse("prices")).content.decode()
    services.gpu_price_record(
        price=GpuPrice(
            provider=Provider.objects.get(slug="bolt"),
            accelerator=catalog["h100-80gb"],
            usd_per_gpu_hour=Decimal("1.99"),
            effective_date=prices,
            offer="bolt-1x",
        ),
        source="feed",
    )

    after = client.get(reverse("prices")).content.decode()

    assert "1.99" not in before and "2.10" in before
    cheapest = [cells for css, cells in rows_of(after, "h100-80gb") if css == "cheapest"]
    assert "1.99" in cheapest[0] and "2.10" not in after.split('class="api-prices"')[0]


def test_the_export_reads_back_as_a_feed(client, prices):
    gpu_csv = client.get(reverse("prices-export-gpu-csv"))
    api_csv = client.get(reverse("prices-export-api-csv"))
    both = client.get(reverse("prices-export-json"))

    assert gpu_csv["Content-Type"].startswith("text/csv")
    gpu = feeds.parse("k3planner_csv", gpu_csv.content)
    api = feeds.parse("k3planner_csv", api_csv.content)
    doc = feeds.parse("k3planner_json", both.content)
    assert sorted(o.usd_per_gpu_hour for o in gpu.gpu) == sorted(
        Decimal(x) for x in ("2.95", "2.10", "1.20", "2.50", "4.10")
    )
    assert [(o.model_id, o.usd_per_m_output) for o in api.api] == [("kimi-k3", Decimal("15"))]
    assert len(doc.gpu) == 5 and len(doc.api) == 1
    assert doc.providers["Article assumption (July 2026)"]["kind"] == "assumption"
    assert gpu.rejections == api.rejections == doc.rejections == []


def test_the_export_of_a_past_date_and_a_bad_date(client, prices):
    old = client.get(
        reverse("prices-export-gpu-csv"), {"as_of": (prices - dt.timedelta(days=60)).isoformat()}
    )
    bad = client.get(reverse("prices-export-gpu-csv"), {"as_of": "yesterday"})

    parsed = feeds.parse("k3planner_csv", old.content)
    assert sorted(o.usd_per_gpu_hour for o in parsed.gpu) == [Decimal("2.5"), Decimal("3.4")]
    assert bad.status_code == 400


def test_an_empty_install_says_how_to_load_prices(client, db):
    body = client.get(reverse("prices")).content.decode()

    assert "python manage.py load_prices" in body


def test_all_accelerators_show_each_ones_cheapest_offers_and_link_to_the_rest(
    client, prices, monkeypatch
):
    from pricing import views

    monkeypatch.setattr(views, "OFFERS_PER_ACCELERATOR", 2)

    body = client.get(reverse("prices")).content.decode()

    rows = rows_of(body, "h100-80gb")
    assert [re.search(r"\d+\.\d\d", cells).group() for _, cells in rows] == ["1.20", "2.10"]
    assert "(4 current offers)" in body
    assert "The 2 cheapest shown." in body
    assert re.search(r'<a href="\?accelerator=h100-80gb"[^>]*>All 4 offers of H100 80GB', body)
    assert len(rows_of(body, "b200-192gb")) == 1 and "All 1 offers" not in body


def test_one_accelerators_offers_come_a_page_at_a_time_cheapest_first(client, prices, monkeypatch):
    from pricing import views

    monkeypatch.setattr(views, "OFFERS_PER_PAGE", 3)

    first = client.get(reverse("prices"), {"accelerator": "h100-80gb"}).content.decode()
    second = client.get(
        reverse("prices"), {"accelerator": "h100-80gb", "page": "2"}
    ).content.decode()
    beyond = client.get(reverse("prices"), {"accelerator": "h100-80gb", "page": "99"})

    prices_on = lambda body: [  # noqa: E731
        re.search(r"\d+\.\d\d", cells).group() for _, cells in rows_of(body, "h100-80gb")
    ]
    assert prices_on(first) == ["1.20", "2.10", "2.50"]
    assert prices_on(second) == ["2.95"]
    assert "Offers 1–3 of 4, cheapest first." in first
    assert 'href="?accelerator=h100-80gb&amp;page=2"' in first and 'rel="prev"' not in first
    assert 'href="?accelerator=h100-80gb"' in second and 'rel="next"' not in second
    assert beyond.status_code == 200 and prices_on(beyond.content.decode()) == ["2.95"]


def test_the_pages_keep_the_kind_filter(client, catalog, prices, monkeypatch):
    from pricing import views

    monkeypatch.setattr(views, "OFFERS_PER_PAGE", 1)
    today = timezone.localdate()
    services.gpu_price_record(
        price=GpuPrice(
            provider=Provider.objects.get(slug="acme"),
            accelerator=catalog["h100-80gb"],
            usd_per_gpu_hour=Decimal("1.50"),
            kind="spot",
            effective_date=today,
        ),
        source="feed",
    )

    body = client.get(
        reverse("prices"), {"accelerator": "h100-80gb", "kind": "spot"}
    ).content.decode()

    assert "(2 current offers, spot)" in body
    assert 'href="?accelerator=h100-80gb&amp;kind=spot&amp;page=2"' in body
