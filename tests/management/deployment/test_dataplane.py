"""Who may read an environment's config: a data-plane token of that environment, or a user
holding environment.manage in its organisation."""

from __future__ import annotations

from tests.conftest import Factory
from tests.management.conftest import World


async def test_dataplane_tokens_are_shown_once_and_scoped_to_their_environment(
    world: World, factory: Factory
) -> None:
    tokens = f"/envs/{world.env_id}/dataplane-tokens"
    created = await world.call("POST", tokens, {"name": "edge-1"})
    assert created.status_code == 201, created.text
    token = created.json()["token"]
    assert token.startswith("pdp_")
    listed = (await world.call("GET", tokens)).json()["items"]
    assert [t["name"] for t in listed] == ["edge-1"]
    assert "token" not in listed[0]

    config = await world.config(token=token)
    assert config.status_code == 200
    assert config.json()["environment_id"] == world.env_id
    assert (await world.call("GET", tokens)).json()["items"][0]["lastUsedAt"] is not None

    other = await world.call("POST", "/envs", {"name": "other"})
    foreign = await world.client.get(
        f"/api/dataplane/v1/envs/{other.json()['id']}/config",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert foreign.status_code == 404

    revoked = await world.call("DELETE", f"{tokens}/{created.json()['id']}")
    assert revoked.status_code == 204
    assert (await world.config(token=token)).status_code == 401
    assert (await world.config(token="pdp_not-a-token")).status_code == 401
    log = (await world.call("GET", "/audit-log?entityType=dataplane_token")).json()
    assert [e["action"] for e in log["items"]] == [
        "dataplane_token.revoke",
        "dataplane_token.create",
    ]
    assert token not in str(log)


async def test_users_need_environment_manage(world: World, factory: Factory) -> None:
    viewer = await factory.user(world.org, roles=("Viewer",))
    denied = await world.config(token=viewer.token)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'environment.manage'"
    outsider = await factory.user(await factory.org(), roles=("Administrator",))
    assert (await world.config(token=outsider.token)).status_code == 404
    response = await world.client.get(f"/api/dataplane/v1/envs/{world.env_id}/config")
    assert response.status_code == 401
    bad_wait = await world.config("?since=0&wait=61")
    assert bad_wait.status_code == 400
    assert bad_wait.json()["errors"][0] == {
        "parameter": "wait",
        "detail": "wait: must be less than or equal to 60",
    }
