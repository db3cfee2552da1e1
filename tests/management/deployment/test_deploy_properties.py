"""Property: whatever plugin configurations a revision carries, a deploy answers 200 or 400
(never a 500), and a refused deploy changes nothing: no deployment, no new config version."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.gateway.plugins.test_registry_properties import configs
from tests.management.conftest import World, route

plugin_maps = st.lists(configs(), max_size=3).map(lambda pairs: dict(pairs))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(service=plugin_maps, own=plugin_maps)
async def test_any_plugins_deploy_or_are_refused_cleanly(
    world: World, service: dict[str, Any], own: dict[str, Any]
) -> None:
    api = await world.call("POST", "/apis", {"name": f"p-{uuid.uuid4().hex[:8]}"})
    revision = await world.call(
        "POST",
        f"/apis/{api.json()['id']}/revisions",
        {
            "serviceSpec": {"plugins": service},
            "routeSpec": [route(f"/{uuid.uuid4().hex}", plugins=own)],
            "environmentUpstreams": [
                {"environmentId": world.env_id, "upstreamId": world.upstream_id}
            ],
        },
    )
    # the structure (an object per plugin, storable JSON) is checked when stored
    assert revision.status_code in (201, 400), revision.text
    if revision.status_code == 400:
        event("refused when stored")
        return
    ids = {"api": api.json()["id"], "revision": revision.json()["id"]}
    before = (await world.config()).json()["version"]
    response = await world.deploy(ids)
    assert response.status_code in (200, 400), response.text
    event(f"deploy answered {response.status_code}")
    after = (await world.config()).json()["version"]
    if response.status_code == 400:
        assert response.json()["detail"].startswith("failed to check the configuration of plugin")
        assert after == before
        deployments = await world.call("GET", f"/apis/{ids['api']}/deployments")
        assert deployments.json()["items"] == []
    else:
        assert after == before + 1
