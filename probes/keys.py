"""Endpoint API keys: encrypted at rest, or read from an environment variable at probe time.

A stored key is written once and never shown again; only `reveal` (called when a probe is
about to send it to its own endpoint) turns it back into text.

The Fernet key comes from ENDPOINT_SECRET_KEY when set, else from SECRET_KEY. Changing either
makes stored keys unreadable: `reveal` then raises KeyUnreadable and the probe says so.
"""

from __future__ import annotations

import base64
import os
import re

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

# Only variables with this prefix may be named: otherwise a team member could point an
# endpoint at their own server with the key "DATABASE_URL" and read our secrets off the wire.
ENV_PREFIX = "ENDPOINT_KEY_"
ENV_NAME_RE = re.compile(r"^ENDPOINT_KEY_[A-Z0-9_]+$")
HKDF_INFO = b"k3planner endpoint keys v1"


class KeyUnreadable(Exception):
    """The stored key cannot be decrypted, or the named variable is not set."""


def _fernet() -> Fernet:
    secret = settings.ENDPOINT_SECRET_KEY or settings.SECRET_KEY
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=HKDF_INFO).derive(
        secret.encode()
    )
    return Fernet(base64.urlsafe_b64encode(derived))


def encrypt(key: str) -> str:
    return _fernet().encrypt(key.encode()).decode("ascii")


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode("ascii")).decode()
    except (InvalidToken, ValueError):
        raise KeyUnreadable(
            "the stored key cannot be decrypted (was ENDPOINT_SECRET_KEY or SECRET_KEY "
            "changed?); enter the key again"
        ) from None


def validate_env_name(name: str) -> str:
    if not ENV_NAME_RE.match(name):
        raise ValueError(
            f"the variable name must start with {ENV_PREFIX} and use A-Z, 0-9 and _ only"
        )
    return name


def from_env(name: str) -> str:
    validate_env_name(name)
    value = os.environ.get(name, "")
    if not value:
        raise KeyUnreadable(f"the environment variable {name} is not set where probes run")
    return value
