from django.contrib import messages
from django.contrib.auth.decorators import login_required
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
