"""Fixtures for the engine tests (no database, no Django)."""

import sys
from pathlib import Path

import pytest

# pytest-django puts the project root on sys.path; run with -p no:django we do it ourselves,
# before any test module imports sizing.
ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture
def k3():
    from engine_cases import k3_model

    return k3_model()


@pytest.fixture
def article_scenario(k3):
    from engine_cases import ARTICLE_PRICES, H100

    from sizing.engine import Scenario, Workload

    return Scenario(k3, H100, Workload(), ARTICLE_PRICES)
