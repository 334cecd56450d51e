"""The OpenAPI document and the interactive docs, served without a CDN."""

from django.urls import reverse


def test_the_openapi_document_lists_every_area(client, db):
    r = client.get("/api/v1/openapi.json")
    assert r.status_code == 200
    paths = r.json()["paths"]
    for path in (
        "/api/v1/models",
        "/api/v1/accelerators",
        "/api/v1/sizing",
        "/api/v1/sizing/floor",
        "/api/v1/models/import",
        "/api/v1/scenarios",
        "/api/v1/scenarios/compare",
    ):
        assert path in paths, path


def test_the_docs_page_uses_local_static_files(client, db):
    r = client.get(reverse("api:openapi-view"))
    html = r.content.decode()
    assert r.status_code == 200
    assert "/static/ninja/swagger-ui-bundle.js" in html
    assert "cdn." not in html
