"""The issue's "done when", in a real browser: a team adds its llama.cpp server, sees it go up,
sees measured tokens/s next to the estimate, stops the server and sees it marked down by the
next sweep — the open page updates itself, no reload."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connections
from django.utils import timezone

from probes import services
from sizing.models import Accelerator, AttentionGroup, LLMModel, WeightFormat
from teams.models import Membership, Team

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture
def probe_page(browser, live_server):
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server.url)
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda m: m.type == "error" and "favicon" not in m.location.get("url", "")
        and errors.append(m.text),
    )  # fmt: skip
    yield page
    context.close()
    # ORM calls made while Playwright's loop ran got connections of their own (asgiref's
    # context-local storage); close them, or the test database cannot be dropped.
    connections.close_all()
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.fixture
def infra(transactional_db, alice):
    team = Team.objects.create(name="Infra", slug="infra")
    Membership.objects.create(team=team, user=alice)
    bf16 = WeightFormat.objects.create(name="bf16", bits_per_weight=16)
    llm = LLMModel.objects.create(
        name="Tiny Llama", slug="tiny-llama", total_params=110_000, active_params=110_000,
        layers=2, weight_format=bf16,
    )  # fmt: skip
    AttentionGroup.objects.create(llm=llm, kind="full", layers=2, kv_heads=2, head_dim=16)
    Accelerator.objects.create(
        name="Laptop CPU", slug="laptop-cpu", vendor="Any", kind="consumer", memory_gb=16,
        bandwidth_tb_s=0.05, bf16_tflops=0.5,
    )  # fmt: skip
    return team


def test_a_team_watches_its_llama_server_go_up_and_down(
    probe_page, infra, own_llama_server, settings
):
    settings.PROBES_SWEEP_S = 1  # the open page polls every sweep period
    page = probe_page
    page.goto("/account/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-pass-123")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state()

    page.goto("/endpoints/")
    page.click("text=Add an endpoint")
    page.select_option("#id_team", label="Infra")
    page.fill("#id_name", "gpu-box")
    page.fill("#id_base_url", own_llama_server.base_url)
    page.select_option("#id_kind", "llama_cpp_python")
    page.fill("#id_model_id", "tiny-llama")
    page.select_option("#id_llm", label="Tiny Llama")
    page.select_option("#id_accelerator", label="Laptop CPU")
    page.fill("#id_api_key", "sk-not-needed-here")
    page.click("form.endpoint button[type=submit]")
    page.wait_for_url("**/endpoints/*/")

    page.click("text=Probe now, with speed")
    page.wait_for_load_state()
    status = page.locator("#endpoint-status .status").first
    assert status.inner_text() == "up"
    row = page.locator("table.measured-vs-estimated tbody tr")
    measured, estimated = row.locator("td").nth(1), row.locator("td").nth(4)
    assert float(measured.inner_text().replace(",", "")) > 0
    assert float(estimated.inner_text().replace(",", "")) > 0
    assert "calibrated from endpoint gpu-box on" in page.content()
    page.locator("[data-plotly='speed-chart'].js-plotly-plot svg.main-svg").first.wait_for()
    assert "sk-not-needed-here" not in page.content()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "probes-endpoint-up.png"), full_page=True)

    own_llama_server.stop()
    # The next scheduled sweep, one interval on (what beat runs every PROBES_SWEEP_S).
    services.endpoints_probe_due(now=timezone.now() + timedelta(seconds=60))

    page.locator("#endpoint-status dl .status-down").wait_for()  # htmx polled it in
    page.screenshot(path=str(SCREENSHOTS / "probes-endpoint-down.png"), full_page=True)
    page.goto("/endpoints/")
    assert "connection refused" in page.locator("table").nth(1).inner_text()
    page.screenshot(path=str(SCREENSHOTS / "probes-endpoint-list.png"), full_page=True)
