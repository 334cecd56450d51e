from django.urls import path

from probes import views

app_name = "probes"
urlpatterns = [
    path("", views.endpoint_list, name="endpoints"),
    path("add/", views.endpoint_add, name="add"),
    path("events/", views.event_list, name="events"),
    path("<int:pk>/", views.endpoint_detail, name="endpoint"),
    path("<int:pk>/edit/", views.endpoint_edit, name="edit"),
    path("<int:pk>/probe/", views.endpoint_probe, name="probe"),
]
