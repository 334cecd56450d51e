"""Users create and revoke their API tokens in the browser; the token is shown once."""

import pytest
from django.urls import reverse

from teams.models import ApiToken

pytestmark = pytest.mark.django_db


def test_it_needs_sign_in(client):
    r = client.get(reverse("tokens"))
    assert r.status_code == 302 and reverse("login") in r["Location"]


def test_it_creates_a_token_shown_once(client, alice):
    client.force_login(alice)
    r = client.post(reverse("tokens"), {"name": "notebook"})
    token = r.context["new_token"]
    assert token.startswith("k3p_") and token in r.content.decode()
    assert token not in client.get(reverse("tokens")).content.decode()
    assert ApiToken.objects.get(user=alice).name == "notebook"


def test_a_nameless_token_is_refused(client, alice):
    client.force_login(alice)
    r = client.post(reverse("tokens"), {"name": ""}, follow=True)
    assert "Name:" in r.content.decode()
    assert not ApiToken.objects.exists()


def test_bob_cannot_revoke_alices_token(client, alice, django_user_model):
    bob = django_user_model.objects.create_user("bob", password="bob-pass-123")
    client.force_login(alice)
    client.post(reverse("tokens"), {"name": "mine"})
    row = ApiToken.objects.get(user=alice)
    client.force_login(bob)
    client.post(reverse("token-revoke", args=[row.id]))
    row.refresh_from_db()
    assert row.revoked is None
