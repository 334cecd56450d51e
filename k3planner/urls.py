from django.contrib import admin
from django.urls import include, path

from k3planner.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("account/", include("teams.urls")),
    path("scenarios/", include("scenarios.urls")),
    path("endpoints/", include("probes.urls")),
    path("prices/", include("pricing.urls")),
    path("", include("sizing.urls")),
]

handler500 = "k3planner.middleware.server_error"
