from django.urls import path

from pricing import views

urlpatterns = [
    path("", views.prices, name="prices"),
    path("export/gpu-prices.csv", views.export_gpu_csv, name="prices-export-gpu-csv"),
    path("export/api-prices.csv", views.export_api_csv, name="prices-export-api-csv"),
    path("export/prices.json", views.export_json, name="prices-export-json"),
]
