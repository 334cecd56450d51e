"""Security headers with a CSP that allows no inline script, a rate-limited sign-in, a clean
`check --deploy` with production settings, and a 503 page while the database is away."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.db import OperationalError
from django.test import override_settings
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


def test_pages_carry_a_csp_without_inline_script(client):
    r = client.get(reverse("home"))
    csp = r["Content-Security-Policy"]
    assert (
        "script-src 'self'" in csp
        and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    )
    assert "frame-ancestors 'none'" in csp
    assert r["X-Frame-Options"] == "DENY"
    assert r["X-Content-Type-Options"] == "nosniff"
    assert r["Referrer-Policy"] == "same-origin"


def test_no_template_has_inline_script_or_event_handlers():
    offenders = []
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            if "src=" not in tag and 'type="application/json"' not in tag:
                offenders.append(f"{path.name}: {tag}")
        offenders += [f"{path.name}: {m}" for m in re.findall(r"\son[a-z]+\s*=\s*[\"']", text)]
    assert offenders == []


def test_sign_in_is_rate_limited(client, alice):
    for _ in range(5):
        r = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
        assert r.status_code == 200
    r = client.post(reverse("login"), {"username": "alice", "password": "alice-pass-123"})
    assert r.status_code == 429
    assert "Too many failed sign-ins" in r.content.decode()


def test_a_good_sign_in_works(client, alice):
    r = client.post(reverse("login"), {"username": "alice", "password": "alice-pass-123"})
    assert r.status_code == 302


def test_every_form_post_needs_csrf(alice):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice)
    assert strict.post(reverse("tokens"), {"name": "x"}).status_code == 403
    r = strict.post(reverse("api:create_scenario"), {}, content_type="application/json")
    assert r.status_code == 403


def test_check_deploy_is_clean_with_production_settings():
    env = {
        "PATH": os.environ["PATH"],
        "HOME": "/tmp",
        "SECRET_KEY": secrets.token_urlsafe(60),
        "DEBUG": "0",
        "SECURE_SSL": "1",
        "ALLOWED_HOSTS": "planner.example.com",
    }
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def raise_database_down(*args, **kwargs):
    raise OperationalError("connection refused")


@override_settings(DEBUG=False)
def test_a_database_outage_is_a_clear_503_page(client, monkeypatch):
    from sizing import views

    monkeypatch.setattr(views.selectors, "llm_models", raise_database_down)
    r = client.get(reverse("home"))
    assert r.status_code == 503
    assert r["Retry-After"] == "30"
    assert "briefly unavailable" in r.content.decode()


def test_a_database_outage_is_a_json_503_in_the_api(client, monkeypatch):
    from sizing import api

    monkeypatch.setattr(api.selectors, "llm_models", raise_database_down)
    r = client.get(reverse("api:list_models"))
    assert r.status_code == 503
    assert r.json()["status"] == 503


def test_a_nul_character_in_a_query_is_a_400_naming_the_parameter(client):
    r = client.get(reverse("api:list_models"), {"q": "qwen\x00"})
    assert r.status_code == 400
    assert r.json()["detail"][0]["field"] == "q"
    assert client.get(reverse("scenarios:library"), {"q": "\x00"}).status_code == 400


def test_an_outage_outside_a_view_is_still_the_503_page(rf):
    from k3planner.middleware import server_error

    request = rf.get("/scenarios/")
    try:
        raise OperationalError("the connection is closed")
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503
    assert "briefly unavailable" in response.content.decode()
