"""The library: what each user may see, search and filters, pages, and a flat query count."""

import pytest
from django.urls import reverse

from scenarios.models import PUBLIC, TEAM, Scenario
from scenarios.services import scenario_clone

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}
LIBRARY = reverse("scenarios:library")


@pytest.fixture
def shelf(alice, bob, charlie, alices_team, make_scenario):
    """Alice: a private and a team scenario; Charlie: a private and a public one."""
    return {
        "alice_private": make_scenario(alice, name="Alice private K3", tags="k3"),
        "alice_team": make_scenario(
            alice, name="Alice team Qwen", visibility=TEAM, team=alices_team, llm="qwen3-32b",
            tags="small qwen",
        ),
        "charlie_private": make_scenario(charlie, name="Charlie private"),
        "charlie_public": make_scenario(
            charlie, name="Charlie public H200", visibility=PUBLIC, accelerator="h200-141gb"
        ),
    }  # fmt: skip


def names(response) -> set[str]:
    return {s.name for s in response.context["page"]}


def test_each_user_sees_what_they_may(client, alice, bob, charlie, shelf):
    client.force_login(alice)
    assert names(client.get(LIBRARY)) == {
        "Alice private K3", "Alice team Qwen", "Charlie public H200",
    }  # fmt: skip
    client.force_login(bob)
    assert names(client.get(LIBRARY)) == {"Alice team Qwen", "Charlie public H200"}
    client.force_login(charlie)
    assert names(client.get(LIBRARY)) == {"Charlie private", "Charlie public H200"}
    client.logout()
    assert names(client.get(LIBRARY)) == {"Charlie public H200"}


def test_search_matches_name_model_and_tags(client, alice, shelf):
    client.force_login(alice)
    assert names(client.get(LIBRARY, {"q": "qwen"})) == {"Alice team Qwen"}
    assert names(client.get(LIBRARY, {"q": "kimi private"})) == {"Alice private K3"}


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"model": "qwen3-32b"}, {"Alice team Qwen"}),
        ({"accelerator": "h200-141gb"}, {"Charlie public H200"}),
        ({"tag": "small"}, {"Alice team Qwen"}),
        ({"tag": "#K3"}, {"Alice private K3"}),
        ({"tag": "sma"}, set()),  # whole tags only
        ({"mine": "1"}, {"Alice private K3", "Alice team Qwen"}),
    ],
)
def test_filters(client, alice, shelf, params, expected):
    client.force_login(alice)
    assert names(client.get(LIBRARY, params)) == expected


def test_the_team_filter(client, alice, alices_team, shelf):
    client.force_login(alice)
    assert names(client.get(LIBRARY, {"team": alices_team.pk})) == {"Alice team Qwen"}


def test_an_htmx_filter_returns_the_rows_only(client, alice, shelf):
    client.force_login(alice)
    body = client.get(LIBRARY, {"q": "qwen"}, **HX).content.decode()
    assert body.lstrip().startswith('<div id="rows">')
    assert "Alice team Qwen" in body and "Alice private K3" not in body
    assert '<form id="library-filters"' not in body


def test_it_paginates_with_real_links(client, alice, shelf):
    first = Scenario.objects.get(name="Alice private K3")
    for _ in range(30):
        scenario_clone(scenario=first, owner=alice)
    client.force_login(alice)
    r = client.get(LIBRARY, {"q": "copy"})
    body = r.content.decode()
    assert r.context["page"].paginator.count == 30 and len(r.context["page"]) == 25
    assert 'href="?q=copy&amp;page=2"' in body and 'hx-get="/scenarios/?q=copy&amp;page=2"' in body
    assert len(client.get(LIBRARY, {"q": "copy", "page": 2}).context["page"]) == 5


def test_rows_link_to_compare_clone_and_delete(client, alice, shelf):
    client.force_login(alice)
    body = client.get(LIBRARY).content.decode()
    mine, theirs = shelf["alice_private"], shelf["charlie_public"]
    assert f'name="ids" value="{mine.pk}" form="compare-form"' in body
    assert reverse("scenarios:delete", args=[mine.pk]) in body
    assert reverse("scenarios:delete", args=[theirs.pk]) not in body
    assert reverse("scenarios:clone", args=[theirs.pk]) in body


def test_the_query_count_does_not_grow_with_scenarios(
    client, alice, alices_team, shelf, django_assert_max_num_queries
):
    first = Scenario.objects.get(name="Alice team Qwen")
    for _ in range(40):
        scenario_clone(scenario=first, owner=alice)
    Scenario.objects.filter(name__startswith="Copy").update(visibility=TEAM, team=alices_team)
    client.force_login(alice)
    with django_assert_max_num_queries(8):
        assert client.get(LIBRARY).status_code == 200
    with django_assert_max_num_queries(8):
        assert (
            client.get(LIBRARY, {"q": "qwen", "tag": "small"}, HTTP_HX_REQUEST="true").status_code
            == 200
        )
