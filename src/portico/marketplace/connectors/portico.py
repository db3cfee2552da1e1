"""The ``portico`` connector: a Portico management service over HTTP, read with the token of
one of its service accounts (``psa_...``, best with the predefined Integration role).

The check lists one API of the organisation (``GET /api/orgs/{org_id}/apis?size=1``): it
proves the address, the token, the organisation and the ``api.read`` permission imports
need, for the price of one small read.

What an import reads (``/work/shared/design/management-api.md``):

* the APIs: ``GET /api/orgs/{org}/apis``, every page (100 a page, the service's largest);
  ``api_id`` and ``uuid`` are the API's id, the title its name, the overview its ``desc``;
* an API's document: ``GET …/apis/{apiId}/spec``, the OpenAPI document it was imported
  from. An API created without one (``POST …/apis``) has none: the service answers 404 and
  the import stores ``documentation: null`` rather than a made-up document, so the catalogue
  shows that there is nothing to show;
* its revision: the highest revision live in an environment (the listing says which), else
  the latest revision (``GET …/revisions?size=1``, newest first), else none. The node's
  ``version`` is the document's ``info.version``, else that revision number;
* the products: ``GET /api/orgs/{org}/products``, every page; the title is the display
  name (else the name), with the quota and the ``apiIds`` as the service holds them.

Subscriptions are provisioned by ``portico_grants.py`` (developer, app with the portal
app's key, the product or the API's implied product); the service account then needs
``developer.manage``, ``product.manage`` and ``analytics.read`` besides the reads.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from portico.core.errors import ValidationFailed
from portico.core.openapi_document import parse_document
from portico.marketplace.connectors import portico_grants
from portico.marketplace.connectors.base import (
    ConnectionField,
    Connector,
    ConnectorError,
    Outbound,
    RemoteApi,
    RemoteApiDetail,
    RemoteNotFound,
    RemoteProduct,
    capabilities,
    json_object,
    json_text,
)
from portico.marketplace.connectors.provisioning import Granted, Grantee, Target, Usage, Window

#: what can travel as a bearer token (RFC 6750's b64token, loosely: visible ASCII)
_TOKEN = re.compile(r"[\x21-\x7e]+")
#: the management service's largest page
PAGE_SIZE = 100
#: at most this many pages are read from one list (100,000 items)
MAX_PAGES = 1000
#: documents larger than this are parsed in a worker thread, off the event loop
_INLINE_PARSE_BYTES = 64 * 1024


class PorticoConnector(Connector):
    id = "portico"
    label = "Portico management service"
    description = "APIs and products of an organisation of a Portico management service."
    capabilities = capabilities(
        apis=True,
        products=True,
        remote_inventory=True,
        async_import=True,
        analytics=True,
        subscription_provisioning=True,
    )
    connection_fields = (
        ConnectionField(
            "base_url",
            "Base URL",
            "url",
            help="Where the management service answers, e.g. https://portico.example.com.",
        ),
        ConnectionField(
            "org_id", "Organisation id", "string", help="The id (a UUID) of the organisation."
        ),
        ConnectionField(
            "token",
            "Service-account token",
            "string",
            secret=True,
            help="The token of a service account of that organisation (psa_...), with the "
            "Integration role or another that grants api.read and product.read.",
        ),
    )
    feature_flag = "gateway_sync.source.portico"

    async def check(self, config: Mapping[str, Any], outbound: Outbound) -> None:
        org, headers = _org_and_headers(config)
        response, _ = await outbound.get(
            f"{org}/apis?size=1", headers=headers, config_field="base_url"
        )
        if response.status_code != 200:
            raise _refusal(response.status_code, config)

    async def list_apis(self, config: Mapping[str, Any], outbound: Outbound) -> list[RemoteApi]:
        org, headers = _org_and_headers(config)
        return [
            _remote_api(item) for item in await _all_pages(outbound, f"{org}/apis", headers, config)
        ]

    async def fetch_api(
        self,
        config: Mapping[str, Any],
        outbound: Outbound,
        api_id: str,
        *,
        listed: RemoteApi | None = None,
    ) -> RemoteApiDetail:
        org, headers = _org_and_headers(config)
        try:
            api_url = f"{org}/apis/{uuid.UUID(api_id)}"
        except ValueError:  # every id of the management service is a UUID
            raise RemoteNotFound(f"no API {api_id!r}") from None
        if listed is None:
            status, body = await outbound.read_json(api_url, headers=headers)
            if status == 404:
                raise RemoteNotFound(f"no API {api_id!r}")
            if status != 200:
                raise _refusal(status, config)
            listed = _remote_api(json_object(body, f"API {api_id}"))
        documentation, revision = await asyncio.gather(
            _document(outbound, api_url, headers, config),
            _revision(outbound, api_url, headers, config, listed.revision),
        )
        info = (documentation or {}).get("info")
        version = info.get("version") if isinstance(info, dict) else None
        return RemoteApiDetail(
            api_id=listed.api_id,
            title=listed.title,
            uuid=listed.uuid,
            overview=listed.overview,
            version=version if isinstance(version, str) else (revision or ""),
            revision=revision,
            documentation=documentation,
        )

    async def list_products(
        self, config: Mapping[str, Any], outbound: Outbound
    ) -> list[RemoteProduct]:
        org, headers = _org_and_headers(config)
        return [
            _remote_product(item)
            for item in await _all_pages(outbound, f"{org}/products", headers, config)
        ]

    # ------------------------------------------------ provisioning (portico_grants.py)

    async def grant(
        self, config: Mapping[str, Any], outbound: Outbound, grantee: Grantee, target: Target
    ) -> Granted:
        async with outbound.reading() as shared:
            return await portico_grants.grant(_remote(config, shared), grantee, target)

    async def withdraw(
        self, config: Mapping[str, Any], outbound: Outbound, *, app_id: str, product_id: str
    ) -> None:
        async with outbound.reading() as shared:
            await portico_grants.withdraw(_remote(config, shared), app_id, product_id)

    async def set_key(
        self, config: Mapping[str, Any], outbound: Outbound, *, app_id: str, key: str
    ) -> None:
        await portico_grants.set_key(_remote(config, outbound), app_id, key)

    async def remove_app(
        self, config: Mapping[str, Any], outbound: Outbound, *, app_id: str
    ) -> None:
        await portico_grants.remove_app(_remote(config, outbound), app_id)

    async def usage(
        self,
        config: Mapping[str, Any],
        outbound: Outbound,
        *,
        app_id: str,
        product_id: str,
        window: Window,
    ) -> Usage:
        async with outbound.reading() as shared:
            return await portico_grants.usage(
                _remote(config, shared), app_id, product_id, window, datetime.now(UTC)
            )


def _remote(config: Mapping[str, Any], outbound: Outbound) -> portico_grants.Remote:
    org, headers = _org_and_headers(config)
    return portico_grants.Remote(outbound, org, headers)


def _org_and_headers(config: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The organisation's base URL and the headers that authenticate to it."""
    try:
        org_id = uuid.UUID(str(config["org_id"]))
    except ValueError:
        raise ConnectorError("org_id: an organisation id (a UUID)", field="org_id") from None
    token = str(config["token"])
    if not _TOKEN.fullmatch(token):
        raise ConnectorError(
            "token: a service-account token is printable ASCII without spaces (psa_...)",
            field="token",
        )
    base = str(config["base_url"]).rstrip("/")
    return f"{base}/api/orgs/{quote(str(org_id))}", {"Authorization": f"Bearer {token}"}


async def _all_pages(
    outbound: Outbound, url: str, headers: Mapping[str, str], config: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Every item of a list of the management service (``{items, page, size, total}``)."""
    items: list[dict[str, Any]] = []
    for page in range(1, MAX_PAGES + 1):
        status, body = await outbound.read_json(
            f"{url}?page={page}&size={PAGE_SIZE}", headers=headers
        )
        if status != 200:
            raise _refusal(status, config)
        listed = json_object(body, f"the list at {url}")
        batch, total = listed.get("items"), listed.get("total")
        if not isinstance(batch, list) or not isinstance(total, int):
            raise ConnectorError(f"{url} did not answer a list ({{items, total}})")
        items.extend(json_object(item, f"an item of {url}") for item in batch)
        if not batch or page * PAGE_SIZE >= total:
            return items
    raise ConnectorError(f"{url} lists more than {MAX_PAGES * PAGE_SIZE} items")


def _remote_api(item: Mapping[str, Any]) -> RemoteApi:
    api_id = json_text(item.get("id"), "an API's id")
    live = [
        d["revisionNumber"]
        for d in item.get("deployments") or ()
        if isinstance(d, dict) and isinstance(d.get("revisionNumber"), int)
    ]
    return RemoteApi(
        api_id=api_id,
        uuid=api_id,
        title=json_text(item.get("name"), f"the name of API {api_id}"),
        overview=json_text(item.get("desc"), f"the desc of API {api_id}", default=""),
        revision=str(max(live)) if live else None,
    )


def _remote_product(item: Mapping[str, Any]) -> RemoteProduct:
    product_id = json_text(item.get("id"), "a product's id")
    name = json_text(item.get("name"), f"the name of product {product_id}")
    api_ids = item.get("apiIds") or []
    if not isinstance(api_ids, list) or not all(isinstance(a, str) for a in api_ids):
        raise ConnectorError(f"the apiIds of product {product_id} are not a list of ids")
    quota = item.get("quota")
    return RemoteProduct(
        product_id=product_id,
        uuid=product_id,
        title=json_text(item.get("displayName"), "a display name", default="") or name,
        description=json_text(
            item.get("description"), f"the description of product {product_id}", default=""
        ),
        quota=json_object(quota, f"the quota of product {product_id}") if quota else None,
        api_ids=tuple(api_ids),
    )


async def _document(
    outbound: Outbound, api_url: str, headers: Mapping[str, str], config: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The API's OpenAPI document, read as the management service's import reads one (size,
    depth, no NUL: what the store can hold); None when the API has none."""
    response, body = await outbound.read(f"{api_url}/spec", headers=headers)
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise _refusal(response.status_code, config)
    try:
        if len(body) > _INLINE_PARSE_BYTES:
            return await asyncio.to_thread(parse_document, body)
        return parse_document(body)
    except ValidationFailed as refused:
        raise ConnectorError(
            f"the document at {api_url}/spec cannot be read: {refused.detail}"
        ) from None


async def _revision(
    outbound: Outbound,
    api_url: str,
    headers: Mapping[str, str],
    config: Mapping[str, Any],
    live: str | None,
) -> str | None:
    """The revision live in an environment (highest number), else the latest one."""
    if live is not None:
        return live
    status, body = await outbound.read_json(f"{api_url}/revisions?size=1", headers=headers)
    if status != 200:
        raise _refusal(status, config)
    items = json_object(body, f"the revisions of {api_url}").get("items")
    if not isinstance(items, list) or not items:
        return None
    number = json_object(items[0], "a revision").get("number")
    return str(number) if isinstance(number, int) else None


def _refusal(status: int, config: Mapping[str, Any]) -> ConnectorError:
    """What an answer other than 200 of the management service means."""
    base = str(config["base_url"]).rstrip("/")
    org_id = config["org_id"]
    if status == 401:
        return ConnectorError(
            "the management service refused the token (unknown, revoked or expired)",
            field="token",
        )
    if status == 403:
        return ConnectorError(
            "the token's service account may not read the organisation's APIs or products "
            "(it needs api.read and product.read: give it the Integration role)",
            field="token",
        )
    if status == 404:
        return ConnectorError(
            f"no organisation {org_id} is visible to this token at {base} (wrong "
            "organisation id, a token of another organisation, or not a Portico "
            "management service)",
            field="org_id",
        )
    return ConnectorError(f"the management service at {base} answered {status}", field="base_url")


CONNECTOR = PorticoConnector()
