from django.urls import path, re_path

from scenarios import views

app_name = "scenarios"

urlpatterns = [
    path("", views.library, name="library"),
    path("new/", views.builder, name="builder"),
    path("new/models/", views.model_options, name="model-options"),
    path("new/prices/", views.price_options, name="price-options"),
    path("compare/", views.compare, name="compare"),
    re_path(r"^compare/export\.(?P<fmt>csv|json)$", views.compare_export, name="compare-export"),
    path("<int:scenario_id>/", views.detail, name="detail"),
    path("<int:scenario_id>/edit/", views.builder, name="edit"),
    path("<int:scenario_id>/print/", views.print_view, name="print"),
    path("<int:scenario_id>/clone/", views.clone, name="clone"),
    path("<int:scenario_id>/delete/", views.delete, name="delete"),
    re_path(r"^(?P<scenario_id>[0-9]+)/export\.(?P<fmt>csv|json)$", views.export, name="export"),
]
