"""Deleting nodes by the transition table: an API's hooks run, then it goes (its product
associations by cascade); a product is disassociated, then its hooks run, then it goes. A hook
that raises leaves everything as it was."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.engine import Database
from portico.core.errors import Conflict
from portico.marketplace.node import hooks
from portico.marketplace.node.models import Bundle, CatalogueNode, ProductApi
from tests.marketplace.catalogue.conftest import new_api, new_product, refused
from tests.marketplace.conftest import SiteAccount, url


class RevocationFailed(Conflict):
    default_detail = "the subscriptions could not be revoked"


@dataclass
class Seen:
    """What a deletion hook saw of the store, in the deleting transaction."""

    node: uuid.UUID
    reason: str
    node_exists: bool
    #: (product, api) rows that mention the node
    associations: list[tuple[uuid.UUID, uuid.UUID]]


@dataclass
class Recorder:
    seen: list[Seen] = field(default_factory=list)
    fail: bool = False

    async def __call__(self, session: AsyncSession, node: CatalogueNode, reason: str) -> None:
        rows = await session.execute(
            select(ProductApi.product_id, ProductApi.api_id).where(
                (ProductApi.product_id == node.id) | (ProductApi.api_id == node.id)
            )
        )
        exists = await session.scalar(select(CatalogueNode.id).where(CatalogueNode.id == node.id))
        self.seen.append(Seen(node.id, reason, exists is not None, [tuple(r) for r in rows]))
        if self.fail:
            raise RevocationFailed()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """A deletion hook on both bundles, as the subscriptions module registers its revocation;
    removed after the test."""
    hook = Recorder()
    for bundle in (Bundle.APIS, Bundle.API_PRODUCTS):
        hooks.on_delete(bundle, hook)
    try:
        yield hook
    finally:
        for bundle in (Bundle.APIS, Bundle.API_PRODUCTS):
            hooks.remove(bundle, hook)


async def associations(database: Database) -> list[tuple[uuid.UUID, uuid.UUID]]:
    async with database.session() as session:
        rows = await session.execute(
            select(ProductApi.product_id, ProductApi.api_id).order_by(ProductApi.position)
        )
        return [(p, a) for p, a in rows]


async def node_ids(database: Database) -> set[uuid.UUID]:
    async with database.session() as session:
        return set(await session.scalars(select(CatalogueNode.id)))


async def test_an_api_runs_its_hooks_then_goes_with_its_associations(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database, recorder: Recorder
) -> None:
    orders, payments = await new_api(admin_api, editor), await new_api(admin_api, editor)
    product = await new_product(admin_api, editor, associated_apis=[orders["id"], payments["id"]])
    deleted = await admin_api.delete(url(f"/apis/{orders['id']}"), headers=editor.headers)
    assert deleted.status_code == 204, deleted.text
    assert deleted.content == b""
    orders_id, product_id = uuid.UUID(orders["id"]), uuid.UUID(product["id"])
    # the hook ran before the deletion: the node and its association were still there
    assert recorder.seen == [
        Seen(orders_id, "the API 'Orders' was deleted", True, [(product_id, orders_id)])
    ]
    assert await node_ids(database) == {uuid.UUID(payments["id"]), product_id}
    assert await associations(database) == [(product_id, uuid.UUID(payments["id"]))]
    got = await admin_api.get(url(f"/products/{product['id']}"), headers=editor.headers)
    assert got.json()["data"]["associated_apis"] == [payments["id"]]
    gone = await admin_api.get(url(f"/apis/{orders['id']}"), headers=editor.headers)
    assert gone.status_code == 404


async def test_a_product_is_disassociated_before_its_hooks_then_goes(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database, recorder: Recorder
) -> None:
    orders = await new_api(admin_api, editor)
    product = await new_product(admin_api, editor, associated_apis=[orders["id"]])
    other = await new_product(admin_api, editor, associated_apis=[orders["id"]])
    deleted = await admin_api.delete(url(f"/products/{product['id']}"), headers=editor.headers)
    assert deleted.status_code == 204, deleted.text
    product_id = uuid.UUID(product["id"])
    # disassociated first: the hook saw the node without its APIs
    assert recorder.seen == [Seen(product_id, "the API product 'Gold' was deleted", True, [])]
    assert await node_ids(database) == {uuid.UUID(orders["id"]), uuid.UUID(other["id"])}
    assert await associations(database) == [(uuid.UUID(other["id"]), uuid.UUID(orders["id"]))]


@pytest.mark.parametrize("bundle", ["apis", "products"])
async def test_a_hook_that_raises_leaves_everything_in_place(
    admin_api: httpx.AsyncClient,
    editor: SiteAccount,
    database: Database,
    recorder: Recorder,
    bundle: str,
) -> None:
    orders = await new_api(admin_api, editor)
    product = await new_product(admin_api, editor, associated_apis=[orders["id"]])
    before_nodes, before_rows = await node_ids(database), await associations(database)
    recorder.fail = True
    target = orders if bundle == "apis" else product
    response = await admin_api.delete(url(f"/{bundle}/{target['id']}"), headers=editor.headers)
    assert refused(response, 409)["detail"] == "the subscriptions could not be revoked"
    assert len(recorder.seen) == 1
    assert await node_ids(database) == before_nodes
    assert await associations(database) == before_rows
    got = await admin_api.get(url(f"/{bundle}/{target['id']}"), headers=editor.headers)
    assert got.json()["data"] == target
    # and once the hook lets it through, the deletion happens
    recorder.fail = False
    again = await admin_api.delete(url(f"/{bundle}/{target['id']}"), headers=editor.headers)
    assert again.status_code == 204
    assert uuid.UUID(target["id"]) not in await node_ids(database)


async def test_hooks_of_one_bundle_do_not_run_for_the_other(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    only_apis = Recorder()
    hooks.on_delete(Bundle.APIS, only_apis)
    try:
        product = await new_product(admin_api, editor)
        deleted = await admin_api.delete(url(f"/products/{product['id']}"), headers=editor.headers)
        assert deleted.status_code == 204
        assert only_apis.seen == []
    finally:
        hooks.remove(Bundle.APIS, only_apis)
