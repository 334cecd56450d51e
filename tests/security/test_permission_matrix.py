"""Who may see and change what, page by page: anonymous, Alice (owner), Bob (her team),
Charlie (another team) and Sam (staff, not on the team). The API has its own tests in tests/api.
"""

import pytest
from django.urls import reverse

from probes.models import Endpoint
from probes.services import endpoint_save
from scenarios.models import PRIVATE, PUBLIC, TEAM, Scenario
from scenarios.services import scenario_create, scenario_inputs_from_dict
from sizing.services import catalog_load
from teams.models import Membership, Team

pytestmark = pytest.mark.django_db
ROLES = ["anonymous", "alice", "bob", "charlie", "staff"]
OK, HIDDEN, LOGIN, FORBIDDEN = 200, 404, 302, 403


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """Built once for the module (sizing three scenarios is the slow part), removed after."""
    from django.contrib.auth.models import User

    with django_db_blocker.unblock():
        catalog_load()
        alice = User.objects.create_user("alice", password="alice-pass-123")
        staff = User.objects.create_user("sam", password="sam-pass-123", is_staff=True,
                                         is_superuser=True)  # fmt: skip
        team = Team.objects.create(name="Capacity", slug="capacity")
        Membership.objects.create(team=team, user=alice)
        bob = User.objects.create_user("bob", password="bob-pass-123")
        Membership.objects.create(team=team, user=bob)
        charlie = User.objects.create_user("charlie", password="charlie-pass-123")
        other = Team.objects.create(name="Other", slug="other")
        Membership.objects.create(team=other, user=charlie)
        inputs = scenario_inputs_from_dict({"llm": "qwen3-14b", "accelerator": "h100-80gb"})
        scenarios = {
            v: scenario_create(owner=alice, inputs=inputs, name=f"{v} plan", visibility=v,
                               team=team if v == TEAM else None)
            for v in (PRIVATE, TEAM, PUBLIC)
        }  # fmt: skip
        endpoint = endpoint_save(
            endpoint=Endpoint(team=team, name="llama", base_url="http://127.0.0.1:9/",
                              kind="llama_cpp", model_id="tiny"),
        )  # fmt: skip
    users = {"alice": alice, "bob": bob, "charlie": charlie, "staff": staff}
    yield {"users": users, "scenarios": scenarios, "endpoint": endpoint}
    with django_db_blocker.unblock():
        Endpoint.objects.all().delete()
        Scenario.objects.all().delete()
        Team.objects.all().delete()
        User.objects.all().delete()
        from sizing.models import Accelerator, LLMModel, WeightFormat

        LLMModel.objects.all().delete()
        Accelerator.objects.all().delete()
        WeightFormat.objects.all().delete()


def as_role(client, world, role):
    if role != "anonymous":
        client.force_login(world["users"][role])
    return client


# (url name, scenario visibility, expected status for each of ROLES)
SCENARIO_PAGES = [
    ("scenarios:detail", PRIVATE, [HIDDEN, OK, HIDDEN, HIDDEN, HIDDEN]),
    ("scenarios:detail", TEAM, [HIDDEN, OK, OK, HIDDEN, HIDDEN]),
    ("scenarios:detail", PUBLIC, [OK, OK, OK, OK, OK]),
    ("scenarios:print", PRIVATE, [HIDDEN, OK, HIDDEN, HIDDEN, HIDDEN]),
    ("scenarios:print", TEAM, [HIDDEN, OK, OK, HIDDEN, HIDDEN]),
    ("scenarios:edit", PRIVATE, [LOGIN, OK, HIDDEN, HIDDEN, HIDDEN]),
    ("scenarios:edit", TEAM, [LOGIN, OK, FORBIDDEN, HIDDEN, HIDDEN]),
    ("scenarios:edit", PUBLIC, [LOGIN, OK, FORBIDDEN, FORBIDDEN, FORBIDDEN]),
    ("scenarios:delete", PRIVATE, [LOGIN, OK, HIDDEN, HIDDEN, HIDDEN]),
    ("scenarios:delete", PUBLIC, [LOGIN, OK, FORBIDDEN, FORBIDDEN, FORBIDDEN]),
]


@pytest.mark.parametrize("name, visibility, expected", SCENARIO_PAGES)
@pytest.mark.parametrize("role", ROLES)
def test_scenario_pages(client, world, role, name, visibility, expected):
    scenario = world["scenarios"][visibility]
    r = as_role(client, world, role).get(reverse(name, args=[scenario.pk]))
    assert r.status_code == expected[ROLES.index(role)]


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("role", ROLES)
def test_exports_follow_visibility(client, world, role, fmt):
    scenario = world["scenarios"][PRIVATE]
    r = as_role(client, world, role).get(reverse("scenarios:export", args=[scenario.pk, fmt]))
    assert r.status_code == (OK if role == "alice" else HIDDEN)


@pytest.mark.parametrize("role", ["anonymous", "bob", "charlie", "staff"])
def test_only_the_owner_deletes(client, world, role):
    scenario = world["scenarios"][TEAM]
    as_role(client, world, role).post(reverse("scenarios:delete", args=[scenario.pk]))
    assert Scenario.objects.filter(pk=scenario.pk).exists()


@pytest.mark.parametrize("role", ["charlie", "staff"])
def test_a_crafted_htmx_request_cannot_read_a_private_scenario(client, world, role):
    scenario = world["scenarios"][PRIVATE]
    r = as_role(client, world, role).get(
        reverse("scenarios:edit", args=[scenario.pk]), headers={"HX-Request": "true"}
    )
    assert r.status_code == HIDDEN
    assert "private plan" not in r.content.decode()


@pytest.mark.parametrize("role", ROLES)
def test_the_library_lists_only_what_the_role_may_see(client, world, role):
    r = as_role(client, world, role).get(reverse("scenarios:library"))
    html = r.content.decode()
    visible = {
        "anonymous": {"public"},
        "alice": {"private", "team", "public"},
        "bob": {"team", "public"},
        "charlie": {"public"},
        "staff": {"public"},
    }[role]
    for v in (PRIVATE, TEAM, PUBLIC):
        assert (f"{v} plan" in html) == (v in visible), (role, v)


ENDPOINT_PAGES = [
    ("endpoint", [LOGIN, OK, OK, HIDDEN, HIDDEN]),
    ("edit", [LOGIN, OK, OK, HIDDEN, HIDDEN]),
]


@pytest.mark.parametrize("name, expected", ENDPOINT_PAGES)
@pytest.mark.parametrize("role", ROLES)
def test_endpoint_pages(client, world, role, name, expected):
    endpoint = world["endpoint"]
    r = as_role(client, world, role).get(reverse(f"probes:{name}", args=[endpoint.pk]))
    assert r.status_code == expected[ROLES.index(role)]


@pytest.mark.parametrize("role", ["anonymous", "charlie", "staff"])
def test_outsiders_cannot_probe_an_endpoint(client, world, role):
    endpoint = world["endpoint"]
    r = as_role(client, world, role).post(reverse("probes:probe", args=[endpoint.pk]))
    assert r.status_code in (LOGIN, HIDDEN)
    assert not endpoint.results.exists()


@pytest.mark.parametrize(
    "role, expected", [("anonymous", LOGIN), ("alice", LOGIN), ("charlie", LOGIN), ("staff", OK)]
)
def test_only_staff_reach_the_admin(client, world, role, expected):
    r = as_role(client, world, role).get(reverse("admin:pricing_gpuprice_changelist"))
    assert r.status_code == expected


@pytest.mark.parametrize("name", ["home", "prices", "scenarios:builder"])
@pytest.mark.parametrize("role", ROLES)
def test_public_pages_serve_everyone(client, world, role, name):
    assert as_role(client, world, role).get(reverse(name)).status_code == OK
