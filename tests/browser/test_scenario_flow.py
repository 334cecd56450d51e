"""A planner in a real browser: sign in, build the article's K3 scenario, watch it update, save
it for the team, find it in the library, compare it with a smaller model, see the charts."""

import pytest
from playwright.sync_api import expect

from scenarios.models import Scenario
from sizing.services import catalog_load
from teams.models import Membership, Team

pytestmark = pytest.mark.browser


@pytest.fixture
def planner(transactional_db, alice):
    catalog_load()
    team = Team.objects.create(name="Capacity", slug="capacity")
    Membership.objects.create(team=team, user=alice)
    return alice


def sign_in(page, username="alice", password="alice-pass-123"):
    page.goto("/account/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state()


def chart_drawn(page, chart_id: str):
    expect(page.locator(f"#{chart_id}-plot.js-plotly-plot svg.main-svg").first).to_be_visible()


def build(page, search: str, slug: str):
    page.goto("/scenarios/new/")
    page.fill("#model-search", search)
    expect(page.locator(f"#id_llm option[value='{slug}']")).to_have_count(1)
    page.select_option("#id_llm", slug)
    page.select_option("#id_accelerator", "h100-80gb")
    for field, value in (
        ("usd_per_gpu_hour", "2.50"),
        ("api_usd_per_m_input_hit", "0.30"),
        ("api_usd_per_m_input_miss", "3.00"),
        ("api_usd_per_m_output", "15.00"),
        ("monthly_output_m_tokens", "960"),
    ):
        page.fill(f"#id_{field}", value)


def save(page, name: str, tags: str):
    page.fill("#id_name", name)
    page.fill("#id_tags", tags)
    page.select_option("#id_visibility", "team")
    page.select_option("#id_team", label="Capacity")
    page.click("button[name=save]")
    expect(page.locator("h1")).to_have_text(name)


def test_a_planner_builds_saves_finds_and_compares(page, planner, screenshot):
    sign_in(page)
    build(page, "kimi", "kimi-k3")
    result = page.locator("#result")
    expect(page.locator("#verdict-single-gpu")).to_contain_text(
        "Kimi K3 cannot run on one GPU: 1.49 TB of weights"
    )
    expect(page.locator("#kpi-tier1")).to_have_text("$57,600")
    expect(page.locator("#kpi-gpus")).to_have_text("32 × H100 80GB")
    chart_drawn(page, "chart-break-even")
    expect(result).to_contain_text("25 minutes")

    # Results follow the fields without a page load: a marker on window survives the update.
    page.evaluate("window.__samePage = true")
    page.fill("#id_hours_per_day", "4")
    expect(page.locator("#kpi-tier1")).to_have_text("$9,600")  # 32 x 4 h x 30 days x $2.50
    assert page.evaluate("window.__samePage") is True
    chart_drawn(page, "chart-break-even")  # redrawn after the swap
    page.fill("#id_concurrency", "0")
    expect(page.locator("#err-concurrency")).to_contain_text("greater than or equal to 1")
    page.fill("#id_concurrency", "8")
    expect(page.locator("#err-concurrency")).to_be_empty()
    page.fill("#id_hours_per_day", "24")
    expect(page.locator("#kpi-tier1")).to_have_text("$57,600")
    for chart in ("chart-memory", "chart-utilisation"):
        chart_drawn(page, chart)
    page.evaluate("document.querySelector('.inputs').scrollTop = 0")  # its own scroll box
    screenshot(page, "builder-k3")

    save(page, "K3 on H100 (article)", "k3 article")
    k3 = Scenario.objects.get(name="K3 on H100 (article)")
    expect(page.locator("#prices-as-of")).to_be_visible()
    chart_drawn(page, "chart-break-even")
    screenshot(page, "scenario-detail")

    build(page, "qwen3 32", "qwen3-32b")
    expect(page.locator("#verdict-single-gpu")).to_contain_text("Qwen3 32B")
    chart_drawn(page, "chart-kv")
    save(page, "Qwen3 32B on one H100", "small")

    page.goto("/scenarios/")
    page.fill("#library-filters input[name=q]", "K3")
    expect(page.locator("#rows tbody tr")).to_have_count(1)
    expect(page.locator(f"#scenario-{k3.pk}")).to_contain_text("K3 on H100 (article)")
    page.fill("#library-filters input[name=q]", "")
    expect(page.locator("#rows tbody tr")).to_have_count(2)
    screenshot(page, "library")

    page.check(f"#scenario-{k3.pk} input[name=ids]")
    page.locator("#rows tbody tr").filter(has_text="Qwen3").locator("input[name=ids]").check()
    page.click("text=Compare ticked")
    expect(page.locator("h1")).to_have_text("Compare 2 scenarios")
    expect(page.locator("#compare-table")).to_contain_text("Qwen3 32B on one H100")
    expect(page.locator("#compare-table td.best").first).to_be_visible()
    chart_drawn(page, "chart-compare")
    screenshot(page, "compare")


def test_the_pages_fit_a_phone(browser, live_server, planner, screenshot):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, base_url=live_server.url, is_mobile=True
    )
    page = context.new_page()
    try:
        sign_in(page)
        page.goto("/scenarios/new/")
        chart_drawn(page, "chart-break-even")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the builder scrolls sideways at phone width ({width}px)"
        screenshot(page, "builder-phone")
        page.fill("#id_name", "K3 phone")
        page.click("button[name=save]")
        expect(page.locator("h1")).to_have_text("K3 phone")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        screenshot(page, "detail-phone")
    finally:
        context.close()
