"""Scenarios over JSON: a token of team A can never read, edit or compare team B's private plans."""

import pytest
from django.urls import reverse

from scenarios.models import Scenario
from sizing.services import catalog_load
from teams.models import Membership, Team

pytestmark = pytest.mark.django_db

K3 = {
    "llm": "kimi-k3",
    "accelerator": "h100-80gb",
    "usd_per_gpu_hour": 2.5,
    "api_usd_per_m_input_hit": 0.30,
    "api_usd_per_m_input_miss": 3.00,
    "api_usd_per_m_output": 15.00,
}


@pytest.fixture(autouse=True)
def catalog():
    catalog_load()


@pytest.fixture
def team_a(alice):
    team = Team.objects.create(name="Team A", slug="team-a")
    Membership.objects.create(team=team, user=alice)
    return team


@pytest.fixture
def charlie(django_user_model):
    """Charlie is on team B."""
    user = django_user_model.objects.create_user("charlie", password="charlie-pass-123")
    Membership.objects.create(team=Team.objects.create(name="Team B", slug="team-b"), user=user)
    return user


def post(client, name, body, headers, *args):
    return client.post(
        reverse(name, args=args), body, content_type="application/json", headers=headers
    )


def create(client, headers, **overrides):
    body = {"name": "K3 on H100", "inputs": K3, **overrides}
    r = post(client, "api:create_scenario", body, headers)
    assert r.status_code == 201, r.content
    return r.json()


def test_alice_saves_a_scenario_and_reads_it_back(client, alice, bearer):
    auth = bearer(alice)
    body = create(client, auth, tags=["k3", "article"])
    assert body["figures"]["gpus"] == 32
    assert body["figures"]["tier1_usd_per_month"] == 57_600
    assert body["prices_as_of"] is not None
    r = client.get(reverse("api:get_scenario", args=[body["id"]]), headers=auth)
    assert r.status_code == 200 and r.json()["tags"] == ["k3", "article"]


def test_scenarios_need_a_token(client):
    r = client.get(reverse("api:list_scenarios"))
    assert r.status_code == 401


def test_charlie_cannot_read_edit_clone_or_compare_alices_private_scenario(
    client, alice, charlie, bearer
):
    mine = create(client, bearer(alice))
    other = create(client, bearer(alice), name="Second")
    as_charlie = bearer(charlie)
    sid = mine["id"]
    assert (
        client.get(reverse("api:get_scenario", args=[sid]), headers=as_charlie).status_code == 404
    )
    r = client.patch(
        reverse("api:update_scenario", args=[sid]),
        {"name": "pwned"},
        content_type="application/json",
        headers=as_charlie,
    )
    assert r.status_code == 404
    assert (
        client.delete(reverse("api:delete_scenario", args=[sid]), headers=as_charlie).status_code
        == 404
    )
    assert post(client, "api:clone_scenario", {}, as_charlie, sid).status_code == 404
    r = post(client, "api:compare_scenarios", {"ids": [sid, other["id"]]}, as_charlie)
    assert r.status_code == 404
    listed = client.get(reverse("api:list_scenarios"), headers=as_charlie).json()
    assert listed["count"] == 0
    assert Scenario.objects.get(pk=sid).name == "K3 on H100"


def test_a_team_scenario_is_visible_to_the_team_only(
    client, alice, charlie, team_a, django_user_model, bearer
):
    bob = django_user_model.objects.create_user("bob", password="bob-pass-123")
    Membership.objects.create(team=team_a, user=bob)
    shared = create(client, bearer(alice), visibility="team", team="team-a")
    assert (
        client.get(
            reverse("api:get_scenario", args=[shared["id"]]), headers=bearer(bob)
        ).status_code
        == 200
    )
    assert (
        client.get(
            reverse("api:get_scenario", args=[shared["id"]]), headers=bearer(charlie)
        ).status_code
        == 404
    )


def test_a_member_who_is_not_the_owner_cannot_edit(
    client, alice, team_a, django_user_model, bearer
):
    bob = django_user_model.objects.create_user("bob", password="bob-pass-123")
    Membership.objects.create(team=team_a, user=bob)
    shared = create(client, bearer(alice), visibility="team", team="team-a")
    r = client.patch(
        reverse("api:update_scenario", args=[shared["id"]]),
        {"name": "mine now"},
        content_type="application/json",
        headers=bearer(bob),
    )
    assert r.status_code == 403


def test_clone_then_compare(client, alice, bearer):
    auth = bearer(alice)
    k3 = create(client, auth)
    small = create(
        client,
        auth,
        name="Qwen3 32B on one H100",
        inputs={**K3, "llm": "qwen3-32b", "concurrency": 1},
    )
    clone = post(client, "api:clone_scenario", {}, auth, k3["id"]).json()
    assert clone["name"] == "Copy of K3 on H100" and clone["visibility"] == "private"
    r = post(client, "api:compare_scenarios", {"ids": [k3["id"], small["id"]]}, auth)
    body = r.json()
    assert r.status_code == 200
    gpus = next(row for row in body["rows"] if row["figure"] == "gpus")
    assert gpus["values"] == [32, 1] and gpus["best"] == [False, True]


@pytest.mark.parametrize(
    "inputs, field",
    [
        ({**K3, "context_tokens": 0}, "inputs.context_tokens"),
        ({**K3, "llm": "no-such-model"}, "inputs.llm"),
        ({**K3, "wat": 1}, "inputs.wat"),
    ],
)
def test_bad_inputs_are_a_422_naming_the_field(client, alice, bearer, inputs, field):
    r = post(client, "api:create_scenario", {"name": "x", "inputs": inputs}, bearer(alice))
    assert r.status_code == 422, r.content
    assert field in {d["field"] for d in r.json()["detail"]}
    assert not Scenario.objects.exists()


def test_comparing_one_scenario_is_a_422(client, alice, bearer):
    k3 = create(client, bearer(alice))
    r = post(client, "api:compare_scenarios", {"ids": [k3["id"]]}, bearer(alice))
    assert r.status_code == 422
