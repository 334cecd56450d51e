"""First run: make a staff account so a new user can sign in, and say once how.

Does nothing when any superuser exists. The password is random and printed only now.
"""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from teams.models import Membership, Team


class Command(BaseCommand):
    help = "Create a first staff user and team if there is no superuser yet (prints the password)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options):
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write("ensure_admin: a superuser exists; nothing to do")
            return
        password = secrets.token_urlsafe(12)
        user = users.objects.create_superuser(username, f"{username}@localhost", password)
        team, _ = Team.objects.get_or_create(slug="my-team", defaults={"name": "My team"})
        Membership.objects.get_or_create(team=team, user=user, defaults={"role": "admin"})
        self.stdout.write(
            self.style.SUCCESS(
                f"ensure_admin: sign in at http://127.0.0.1:8000/account/login/ as {username!r} "
                f"with password {password!r} (shown once; change it in /admin/)"
            )
        )
