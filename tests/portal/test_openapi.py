"""The portal API's own ``/openapi.json``: public, every route described with its problems,
and the management service's document no longer carries the portal's routes."""

from __future__ import annotations

import httpx

from tests.portal.conftest import url

ROUTES = {
    ("GET", "/.well-known/jwks.json"),
    ("POST", "/registrations"),
    ("POST", "/auth/token"),
    ("POST", "/auth/token/refresh"),
    ("GET", "/me"),
    ("GET", "/notifications"),
    ("GET", "/apis"),
    ("GET", "/apis/{node}"),
    ("GET", "/products"),
    ("GET", "/products/{node}"),
    ("POST", "/invitations/accept"),
    ("GET", "/apps"),
    ("POST", "/apps"),
    ("GET", "/apps/{app}"),
    ("PATCH", "/apps/{app}"),
    ("DELETE", "/apps/{app}"),
    ("POST", "/apps/{app}/credentials/rotate"),
    ("GET", "/apps/{app}/analytics"),
    ("POST", "/apps/{app}/subscriptions"),
    ("GET", "/apps/{app}/subscriptions"),
    # a Portico addition to the design's routes: what a new subscription's Location names
    ("GET", "/apps/{app}/subscriptions/{subscription}"),
    ("DELETE", "/apps/{app}/subscriptions/{subscription}"),
}
#: the statuses each answers (besides its success), as the route's shape and code imply; the
#: apps' 403: the feature ``subscriptions`` switched off (portal/features.py)
FAILURES = {
    ("GET", "/.well-known/jwks.json"): {"400"},
    ("POST", "/registrations"): {"400", "413", "415", "429"},
    ("POST", "/auth/token"): {"400", "401", "413", "415", "429", "503"},
    ("POST", "/auth/token/refresh"): {"400", "401", "413", "415", "429", "503"},
    ("GET", "/me"): {"400", "401"},
    ("GET", "/notifications"): {"400", "401"},
    ("GET", "/apis"): {"400", "401"},
    ("GET", "/apis/{node}"): {"400", "401", "404"},
    ("GET", "/products"): {"400", "401"},
    ("GET", "/products/{node}"): {"400", "401", "404"},
    ("POST", "/invitations/accept"): {"400", "401", "404", "413", "415", "429"},
    ("GET", "/apps"): {"400", "401", "403"},
    ("POST", "/apps"): {"400", "401", "403", "409", "413", "415"},
    ("GET", "/apps/{app}"): {"400", "401", "403", "404"},
    ("PATCH", "/apps/{app}"): {"400", "401", "403", "404", "409", "413", "415"},
    ("DELETE", "/apps/{app}"): {"400", "401", "403", "404"},
    ("POST", "/apps/{app}/credentials/rotate"): {"400", "401", "403", "404"},
    ("GET", "/apps/{app}/analytics"): {"400", "401", "403", "404", "502"},
    ("POST", "/apps/{app}/subscriptions"): {"400", "401", "403", "404", "409", "413", "415"},
    ("GET", "/apps/{app}/subscriptions"): {"400", "401", "403", "404"},
    ("GET", "/apps/{app}/subscriptions/{subscription}"): {"400", "401", "403", "404"},
    ("DELETE", "/apps/{app}/subscriptions/{subscription}"): {"400", "401", "403", "404", "409"},
}
SIGNED_IN = [{"id_token": []}]
EITHER = [{}, {"id_token": []}]


async def test_the_document_lists_every_route_with_its_problems(client: httpx.AsyncClient) -> None:
    response = await client.get(url("/openapi.json"))
    assert response.status_code == 200, response.text
    document = response.json()
    assert document["openapi"].startswith("3.1")
    assert document["servers"] == [{"url": "/api/portal/v1"}]
    operations = {
        (method.upper(), path): operation
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    }
    assert set(operations) == ROUTES
    for key, operation in operations.items():
        responses = operation["responses"]
        failures = {status for status in responses if status[0] in "45"}
        assert failures == FAILURES[key], key
        for status in failures:
            content = responses[status]["content"]
            assert content == {
                "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
            }, (key, status)
        assert "422" not in responses
    for key in ROUTES:
        if key[1].startswith("/apps"):
            assert operations[key]["security"] == SIGNED_IN, key
    assert operations[("GET", "/me")]["security"] == SIGNED_IN
    assert operations[("GET", "/apis")]["security"] == EITHER
    assert operations[("POST", "/invitations/accept")]["security"] == EITHER
    assert "security" not in operations[("POST", "/auth/token")]
    list_parameters = {p["name"] for p in operations[("GET", "/apis")]["parameters"]}
    assert list_parameters == {"page", "limit", "sort", "filter[search]", "filter[organisation]"}
    created = operations[("POST", "/apps")]["responses"]["201"]["content"]["application/json"]
    assert created["schema"] == {"$ref": "#/components/schemas/Envelope_DeveloperAppWithKey_"}
    subscribed = operations[("POST", "/apps/{app}/subscriptions")]["requestBody"]["content"]
    assert subscribed["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SubscriptionRequest"
    }
    schemas = document["components"]["schemas"]
    assert schemas["SubscriptionRequest"]["oneOf"] == [
        {"required": ["api"]},
        {"required": ["product"]},
    ]
    analytics = schemas["SubscriptionAnalytics"]["properties"]
    assert set(analytics) == {"window", "requests", "errors", "latency_ms", "quota"}
    assert "HTTPValidationError" not in schemas and "Problem" in schemas
    assert document["components"]["securitySchemes"]["id_token"]["scheme"] == "bearer"
    # unknown query parameters are refused here too
    assert (await client.get(url("/openapi.json"), params={"x": "1"})).status_code == 400


async def test_the_management_document_no_longer_describes_the_portal(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/api/openapi.json")).json()
    assert not [path for path in document["paths"] if path.startswith("/api/portal/")]
