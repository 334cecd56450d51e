"""Compare 2 to 6 scenarios: key figures side by side, the best per row marked, one chart."""

import csv
import io
import json

import pytest
from django.urls import reverse

from scenarios.models import TEAM

pytestmark = pytest.mark.django_db
COMPARE = reverse("scenarios:compare")


@pytest.fixture
def pair(alice, make_scenario):
    return (
        make_scenario(alice, name="K3 on H100"),
        make_scenario(alice, name="Qwen3 32B on H100", llm="qwen3-32b"),
    )


def ids(*scenarios) -> str:
    return ",".join(str(s.pk) for s in scenarios)


def test_it_shows_both_with_the_best_marked(client, alice, pair):
    client.force_login(alice)
    r = client.get(COMPARE, {"ids": ids(*pair)})
    body = r.content.decode()
    assert "Compare 2 scenarios" in body
    rows = {row.figure.key: row for row in r.context["rows"]}
    assert [c.best for c in rows["tier1_usd_per_month"].cells] == [False, True]
    assert [c.best for c in rows["tokens_per_s_per_usd_per_hour"].cells] == [False, True]
    assert [c.text for c in rows["gpus"].cells] == ["32", "2"]
    assert not any(c.best for c in rows["tier3_usd_per_month"].cells)  # a tie: same API bill
    assert 'data-plotly="chart-compare"' in body and 'class="num best"' in body


def test_the_chart_carries_every_scenarios_lines(client, alice, pair):
    client.force_login(alice)
    figure = client.get(COMPARE, {"ids": ids(*pair)}).context["chart"]
    names = [trace["name"] for trace in figure["data"]]
    assert any(n.startswith("K3 on H100: rent 32 GPUs") for n in names)
    assert any(n.startswith("Qwen3 32B on H100: rent 2 GPUs") for n in names)


def test_ids_may_be_repeated_parameters(client, alice, pair):
    client.force_login(alice)
    r = client.get(f"{COMPARE}?ids={pair[0].pk}&ids={pair[1].pk}")
    assert r.status_code == 200 and len(r.context["scenarios"]) == 2


@pytest.mark.parametrize("count", [1, 7])
def test_it_needs_two_to_six(client, alice, make_scenario, count):
    scenarios = [make_scenario(alice, name=f"s{i}") for i in range(count)]
    client.force_login(alice)
    r = client.get(COMPARE, {"ids": ids(*scenarios)}, follow=True)
    assert "Pick 2 to 6 scenarios to compare." in r.content.decode()


def test_an_invisible_scenario_is_404(client, alice, charlie, pair, make_scenario):
    hidden = make_scenario(charlie, name="Charlie's")
    client.force_login(alice)
    assert client.get(COMPARE, {"ids": ids(pair[0], hidden)}).status_code == 404
    assert client.get(COMPARE, {"ids": "1,abc"}, follow=True).status_code == 200


def test_bob_compares_team_scenarios(client, alice, bob, alices_team, make_scenario):
    a = make_scenario(alice, visibility=TEAM, team=alices_team)
    b = make_scenario(bob, name="Bob's")
    client.force_login(bob)
    assert client.get(COMPARE, {"ids": ids(a, b)}).status_code == 200


def test_export_csv_and_json(client, alice, pair):
    client.force_login(alice)
    r = client.get(reverse("scenarios:compare-export", args=["csv"]), {"ids": ids(*pair)})
    rows = {row[0]: row[1:] for row in csv.reader(io.StringIO(r.content.decode()))}
    assert rows["figure"] == ["unit", "K3 on H100", "Qwen3 32B on H100", "best"]
    assert rows["gpus"] == ["GPUs", "32", "2", "Qwen3 32B on H100"]
    r = client.get(reverse("scenarios:compare-export", args=["json"]), {"ids": ids(*pair)})
    data = json.loads(r.content)
    assert [s["name"] for s in data["scenarios"]] == ["K3 on H100", "Qwen3 32B on H100"]
    assert data["best"]["tier1_usd_per_month"] == [pair[1].pk]


def test_export_refuses_a_bad_pick(client, alice, pair):
    client.force_login(alice)
    r = client.get(reverse("scenarios:compare-export", args=["csv"]), {"ids": str(pair[0].pk)})
    assert r.status_code == 400


def test_six_run_in_a_fixed_number_of_queries(
    client, alice, make_scenario, django_assert_max_num_queries
):
    six = [make_scenario(alice, name=f"s{i}", concurrency=i + 1) for i in range(6)]
    client.force_login(alice)
    with django_assert_max_num_queries(4):
        r = client.get(COMPARE, {"ids": ids(*six)})
    assert r.status_code == 200 and len(r.context["scenarios"]) == 6
