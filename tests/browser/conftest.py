"""Playwright (sync API) on Debian's chromium (the session `browser` fixture in
tests/conftest.py) against pytest-django's live server."""

from pathlib import Path

import pytest

SCREENSHOTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts" / "screenshots"


@pytest.fixture
def screenshot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str, full_page: bool = True) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return take


# Not page errors: no favicon is served, and htmx logs the request it drops when a newer
# recompute replaces it (hx-sync="this:replace") as sendAbort plus its afterRequest.
EXPECTED_CONSOLE = ("htmx:sendAbort", "htmx:afterRequest")


def _console(msg, errors: list[str]) -> None:
    if msg.type != "error" or "favicon" in (msg.location or {}).get("url", ""):
        return
    if not msg.text.startswith(EXPECTED_CONSOLE):
        errors.append(msg.text)


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server.url)
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: _console(msg, errors))
    yield page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"
