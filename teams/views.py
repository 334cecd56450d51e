from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from teams.models import ApiToken
from teams.services import api_token_create, api_token_revoke


@login_required
def tokens(request):
    new_token = None
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name or len(name) > 100:
            messages.error(request, "Name: give the token a name of 1 to 100 characters.")
        else:
            _, new_token = api_token_create(user=request.user, name=name)
    rows = ApiToken.objects.filter(user=request.user)
    return render(request, "teams/tokens.html", {"tokens": rows, "new_token": new_token})


@login_required
@require_POST
def token_revoke(request, token_id: int):
    if api_token_revoke(user=request.user, token_id=token_id):
        messages.success(request, "Token revoked.")
    return redirect("tokens")


class ThrottledLoginView(LoginView):
    """Sign-in that refuses further tries after LOGIN_MAX_FAILURES failures for a username or
    from an address within LOGIN_LOCKOUT_S (429), so passwords cannot be guessed at speed."""

    def _keys(self) -> list[str]:
        username = self.request.POST.get("username", "").strip().lower()[:150]
        address = self.request.META.get("REMOTE_ADDR", "")
        return [f"login-fail:user:{username}", f"login-fail:addr:{address}"]

    def post(self, request, *args, **kwargs):
        if any(cache.get(key, 0) >= settings.LOGIN_MAX_FAILURES for key in self._keys()):
            minutes = max(1, settings.LOGIN_LOCKOUT_S // 60)
            form = self.get_form()
            form.errors.clear()
            form.add_error(None, f"Too many failed sign-ins. Try again in {minutes} minutes.")
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        for key in self._keys():
            cache.add(key, 0, settings.LOGIN_LOCKOUT_S)
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.set(key, 1, settings.LOGIN_LOCKOUT_S)
        return super().form_invalid(form)

    def form_valid(self, form):
        cache.delete(self._keys()[0])
        return super().form_valid(form)
