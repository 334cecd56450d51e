"""Clone (anyone who can see it, into their own private copy) and delete (the owner, confirmed)."""

import pytest
from django.urls import reverse

from scenarios.models import TEAM, Scenario

pytestmark = pytest.mark.django_db


def test_bob_clones_a_team_scenario_into_his_own(client, alice, bob, alices_team, make_scenario):
    scenario = make_scenario(alice, visibility=TEAM, team=alices_team)
    client.force_login(bob)
    r = client.post(reverse("scenarios:clone", args=[scenario.pk]))
    copy = Scenario.objects.get(owner=bob)
    assert r["Location"] == reverse("scenarios:detail", args=[copy.pk])
    assert copy.name == "Copy of K3 on H100" and copy.visibility == "private"


def test_charlie_cannot_clone_what_he_cannot_see(client, alice, charlie, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(charlie)
    assert client.post(reverse("scenarios:clone", args=[scenario.pk])).status_code == 404
    assert Scenario.objects.count() == 1


def test_clone_is_a_post(client, alice, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(alice)
    assert client.get(reverse("scenarios:clone", args=[scenario.pk])).status_code == 405


def test_delete_asks_first_then_deletes(client, alice, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(alice)
    url = reverse("scenarios:delete", args=[scenario.pk])
    body = client.get(url).content.decode()
    assert "Delete “K3 on H100”?" in body and "cannot be undone" in body
    assert Scenario.objects.exists()
    r = client.post(url)
    assert r["Location"] == reverse("scenarios:library") and not Scenario.objects.exists()


def test_bob_cannot_delete_alices_team_scenario(client, alice, bob, alices_team, make_scenario):
    scenario = make_scenario(alice, visibility=TEAM, team=alices_team)
    client.force_login(bob)
    assert client.post(reverse("scenarios:delete", args=[scenario.pk])).status_code == 403
    assert Scenario.objects.exists()


def test_charlie_gets_404(client, alice, charlie, make_scenario):
    scenario = make_scenario(alice)
    client.force_login(charlie)
    url = reverse("scenarios:delete", args=[scenario.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, HTTP_HX_REQUEST="true").status_code == 404
    assert Scenario.objects.exists()


def test_delete_needs_sign_in(client, alice, make_scenario):
    scenario = make_scenario(alice)
    r = client.post(reverse("scenarios:delete", args=[scenario.pk]))
    assert r.status_code == 302 and reverse("login") in r["Location"]
