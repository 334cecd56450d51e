"""The cast: Alice plans for her team, Bob is on it, Charlie is on another team and must never
see Alice's private or team scenarios. The catalog is the seed; prices are dated rows."""

import datetime as dt
from decimal import Decimal

import pytest
from scenario_data import form_data

from pricing.models import ApiPrice, GpuPrice, Provider
from pricing.services import api_price_record, gpu_price_record
from scenarios.models import PRIVATE
from scenarios.services import scenario_create, scenario_inputs_from_dict
from sizing.models import Accelerator, LLMModel
from sizing.services import catalog_load
from teams.models import Membership, Team

PRICE_DAY = dt.date(2026, 7, 20)


@pytest.fixture
def catalog(db):
    report = catalog_load()
    return report


@pytest.fixture
def alices_team(alice):
    team = Team.objects.create(name="Capacity", slug="capacity")
    Membership.objects.create(team=team, user=alice, role="admin")
    return team


@pytest.fixture
def bob(django_user_model, alices_team):
    """Bob is on Alice's team."""
    user = django_user_model.objects.create_user("bob", "bob@example.com", "bob-pass-123")
    Membership.objects.create(team=alices_team, user=user)
    return user


@pytest.fixture
def charlie(django_user_model):
    """Charlie is on another team: he must not see Alice's private or team scenarios."""
    user = django_user_model.objects.create_user("charlie", "c@example.com", "charlie-pass-123")
    other = Team.objects.create(name="Elsewhere", slug="elsewhere")
    Membership.objects.create(team=other, user=user)
    return user


@pytest.fixture
def k3_data():
    return form_data()


@pytest.fixture
def make_scenario(catalog):
    def make(owner, name="K3 on H100", visibility=PRIVATE, team=None, tags="", **changes):
        inputs = scenario_inputs_from_dict(form_data(**changes))
        return scenario_create(
            owner=owner, inputs=inputs, name=name, visibility=visibility, team=team, tags=tags
        )

    return make


@pytest.fixture
def prices(catalog):
    """Dated prices: Lambda's H100 at $2.99 from July, an older $3.29; Moonshot's K3 API."""
    lam = Provider.objects.create(name="Lambda", slug="lambda", kind=Provider.NEOCLOUD)
    moon = Provider.objects.create(name="Moonshot", slug="moonshot", kind=Provider.API_VENDOR)
    h100 = Accelerator.objects.get(slug="h100-80gb")
    h200 = Accelerator.objects.get(slug="h200-141gb")
    k3 = LLMModel.objects.get(slug="kimi-k3")

    def gpu(acc, usd, day, provider=lam):
        return gpu_price_record(
            price=GpuPrice(
                provider=provider, accelerator=acc, usd_per_gpu_hour=Decimal(usd),
                effective_date=day,
            )
        )  # fmt: skip

    old = gpu(h100, "3.29", dt.date(2026, 3, 1))
    current = gpu(h100, "2.99", PRICE_DAY)
    h200_price = gpu(h200, "3.79", PRICE_DAY)
    api = api_price_record(
        price=ApiPrice(
            provider=moon, model_id="kimi-k3", llm=k3, effective_date=PRICE_DAY,
            usd_per_m_input_cache_hit=Decimal("0.30"), usd_per_m_input_cache_miss=Decimal("3.00"),
            usd_per_m_output=Decimal("15.00"),
        )
    )  # fmt: skip
    return {"lambda": lam, "moonshot": moon, "h100_old": old, "h100": current,
            "h200": h200_price, "api": api, "gpu": gpu}  # fmt: skip
