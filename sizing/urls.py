from django.urls import path

from sizing import views

urlpatterns = [
    path("", views.home, name="home"),
    path("models/<str:slug>/", views.model_detail, name="model-detail"),
    path("accelerators/<slug:slug>/", views.accelerator_detail, name="accelerator-detail"),
]
