"""The portal's apps and subscriptions follow the marketplace feature ``subscriptions``: off
(platform-wide, by an administrator) they answer 403 ``/problems/feature-disabled`` with the
administrator's notice, after authentication; without the module they do not exist."""

from __future__ import annotations

import httpx

from portico.app import create_app
from portico.core.audit import Actor
from portico.core.clock import Clock, utcnow
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.marketplace.feature import service as feature_service
from portico.marketplace.feature.schemas import FeatureUpdate
from portico.marketplace.modules import installed
from tests.marketplace.conftest import SiteFactory
from tests.portal.conftest import url


async def test_switched_off_the_apps_answer_feature_disabled(
    client: httpx.AsyncClient, site: SiteFactory, database: Database
) -> None:
    ada = await site.account(email="ada@example.com")
    assert (await client.get(url("/apps"), headers=ada.headers)).status_code == 200
    modules = installed(None)
    async with database.session() as session, session.begin():
        actor = Actor.system()
        await feature_service.sync(session=session, actor=actor, modules=modules, now=utcnow())
        await feature_service.update(
            session=session,
            actor=actor,
            key="subscriptions",
            data=FeatureUpdate(enabled=False, config={"disabled_notice": "back on Monday"}),
            modules=modules,
            now=utcnow(),
        )
    for method, path in (("GET", "/apps"), ("POST", "/apps"), ("GET", "/apps/x/subscriptions")):
        off = await client.request(method, url(path), headers=ada.headers, json={"name": "a"})
        assert off.status_code == 403, (path, off.text)
        problem = off.json()
        assert problem["type"] == "/problems/feature-disabled"
        assert problem["feature"] == "subscriptions"
        assert problem["detail"].endswith("back on Monday")
        anonymous = await client.request(method, url(path), json={"name": "a"})
        assert anonymous.status_code == 401  # who calls comes first
    # the rest of the portal is not that feature's
    assert (await client.get(url("/apis"))).status_code == 200


async def test_without_the_module_the_apps_do_not_exist(
    settings: Settings, database: Database, clock: Clock, site: SiteFactory
) -> None:
    ada = await site.account(email="ada@example.com")
    without = settings.model_copy(update={"marketplace_modules": ["content"]})
    app = create_app(without, database=database, clock=clock)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        assert (await http.get(url("/apps"), headers=ada.headers)).status_code == 404
        document = (await http.get(url("/openapi.json"))).json()
        assert not [path for path in document["paths"] if path.startswith("/apps")]
        assert (await http.get(url("/apis"))).status_code == 200
