from teams.models import Team


def teams_of(user) -> list[int]:
    """Ids of the teams a user belongs to; empty for anonymous users."""
    if not user.is_authenticated:
        return []
    return list(Team.objects.filter(memberships__user=user).values_list("id", flat=True))
