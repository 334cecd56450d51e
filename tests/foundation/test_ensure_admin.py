"""The first run makes one staff account a new user can sign in with; later runs leave it."""

import re
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_the_first_run_makes_a_staff_user_on_a_team_and_prints_the_password():
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    password = re.search(r"password '([^']+)'", out.getvalue()).group(1)
    user = authenticate(username="admin", password=password)
    assert user is not None and user.is_staff
    assert user.teams.filter(slug="my-team").exists()


def test_it_does_nothing_when_a_superuser_exists(staff):
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    assert "nothing to do" in out.getvalue()
