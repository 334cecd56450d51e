import pytest

from teams.services import api_token_create


@pytest.fixture
def bearer():
    """Authorization headers for a user's fresh personal token."""

    def make(user):
        _, token = api_token_create(user=user, name="test")
        return {"Authorization": f"Bearer {token}"}

    return make
