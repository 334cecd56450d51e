import hashlib
import secrets

from django.utils import timezone

from teams.models import ApiToken

TOKEN_PREFIX = "k3p_"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """Returns the row and the token itself, which is never stored and never shown again."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        user=user, name=name, prefix=token[:10], token_hash=token_hash(token)
    )
    return row, token


def api_token_revoke(*, user, token_id: int) -> bool:
    updated = ApiToken.objects.filter(id=token_id, user=user, revoked__isnull=True).update(
        revoked=timezone.now()
    )
    return bool(updated)


def api_token_user(token: str):
    """The active user a token belongs to, or None."""
    row = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=token_hash(token), revoked__isnull=True, user__is_active=True)
        .first()
    )
    if row is None:
        return None
    # Touch last_used at most once a minute so every API call is not also a write.
    now = timezone.now()
    if row.last_used is None or (now - row.last_used).total_seconds() > 60:
        ApiToken.objects.filter(pk=row.pk).update(last_used=now)
    return row.user
