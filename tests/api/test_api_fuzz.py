"""schemathesis over the whole API, anonymous and with a staff token: no server error and no
response that breaks the documented schema, whatever the input."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
)

from sizing.services import catalog_load
from teams.services import api_token_create

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
FUZZ = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,  # the same cases on every run: a failure here is reproducible
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture
def seeded(db):
    catalog_load()
    # Called through WSGI, Django would close the test's connection at each request's end (it
    # is inside the test transaction); its own test client unhooks this the same way.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@FUZZ
def test_anonymous_callers_never_get_a_server_error(case, seeded):
    case.call_and_validate(checks=CHECKS)


@schema.parametrize()
@FUZZ
def test_staff_callers_never_get_a_server_error(case, seeded, staff):
    _, token = api_token_create(user=staff, name="fuzz")
    case.call_and_validate(checks=CHECKS, headers={"Authorization": f"Bearer {token}"})
