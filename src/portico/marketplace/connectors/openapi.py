"""The ``openapi`` connector: APIs described by OpenAPI documents served over HTTP(S).

The check fetches every document, reads it as the management service's import does
(``core/openapi_document.py``: size, depth, safe YAML without aliases) and requires an
object with ``openapi: 3.0.x|3.1.x``, ``info`` with a title and a version, and ``paths``
(or, for 3.1, ``webhooks`` or ``components``) as objects. This is a reading check, not a
full validation of the specification: enough to know the document is what it claims.

Each URL is one API. Its ``api_id`` (and ``uuid``) is the UUID version 5 of the URL as the
connection lists it, in the URL namespace of RFC 4122 (``uuid5(NAMESPACE_URL, url)``):
stable across listings and processes, the same for the same URL in any connection, and
changed only by changing the URL (which makes it another API). The title is ``info.title``,
the overview ``info.description``, the version and the revision ``info.version`` (a document
has no revision of its own). The inventory fetches every document: one that answers but
cannot be read is listed with its ``problem``; one that cannot be fetched (unreachable,
refused by the SSRF guard, an answer other than 200) fails the listing, as it fails the
check. An import also brings in what the document's ``$ref``s point at
(:mod:`.refs`), through the same guard. The source has no products.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Mapping
from typing import Any

from portico.core.errors import ValidationFailed
from portico.core.openapi_document import parse_document
from portico.marketplace.connectors.base import (
    ConnectionField,
    Connector,
    ConnectorError,
    Outbound,
    RemoteApi,
    RemoteApiDetail,
    RemoteNotFound,
    capabilities,
)
from portico.marketplace.connectors.refs import bundle, read_document

# ASCII digits: ``\d`` also matches other scripts' digits, which are no OpenAPI version
_VERSION = re.compile(r"3\.[01]\.[0-9]+")
#: documents fetched at once while listing
_CONCURRENCY = 8


class OpenApiConnector(Connector):
    id = "openapi"
    label = "OpenAPI documents"
    description = "APIs read from OpenAPI 3.0 or 3.1 documents (JSON or YAML) at given URLs."
    capabilities = capabilities(apis=True, remote_inventory=True, async_import=True)
    connection_fields = (
        ConnectionField(
            "urls",
            "Document URLs",
            "url_list",
            help="The URL of each OpenAPI 3.0 or 3.1 document (JSON or YAML), one per API.",
        ),
    )
    feature_flag = "gateway_sync.source.openapi"

    async def check(self, config: Mapping[str, Any], outbound: Outbound) -> None:
        for url in config["urls"]:
            response, body = await outbound.get(url, config_field="urls")
            if response.status_code != 200:
                raise ConnectorError(f"{url} answered {response.status_code}", field="urls")
            # parsing is CPU-bound (YAML near the size limit takes seconds): off the loop
            problem = await asyncio.to_thread(openapi_problem, body)
            if problem is not None:
                raise ConnectorError(
                    f"{url} is not an OpenAPI 3.0/3.1 document: {problem}", field="urls"
                )

    async def list_apis(self, config: Mapping[str, Any], outbound: Outbound) -> list[RemoteApi]:
        limit = asyncio.Semaphore(_CONCURRENCY)

        async def listed(url: str) -> RemoteApi:
            async with limit:
                document, problem = await _fetch(outbound, url)
            if document is None:
                return RemoteApi(
                    api_id=api_id_of(url), uuid=api_id_of(url), title=url, problem=problem
                )
            return _remote_api(url, document)

        return list(await asyncio.gather(*(listed(url) for url in config["urls"])))

    async def fetch_api(
        self,
        config: Mapping[str, Any],
        outbound: Outbound,
        api_id: str,
        *,
        listed: RemoteApi | None = None,
    ) -> RemoteApiDetail:
        url = next((u for u in config["urls"] if api_id_of(u) == api_id), None)
        if url is None:
            raise RemoteNotFound(f"no document URL of this connection has the api_id {api_id!r}")
        document, problem = await _fetch(outbound, url)
        if document is None:
            raise ConnectorError(f"{url} is not an OpenAPI 3.0/3.1 document: {problem}")

        async def referred(address: str) -> dict[str, Any]:
            response, body = await outbound.read(address)
            if response.status_code != 200:
                raise ConnectorError(f"{address} answered {response.status_code}")
            return await asyncio.to_thread(read_document, body, address)

        bundled = await bundle(document, url, referred)
        api = _remote_api(url, bundled)
        return RemoteApiDetail(
            api_id=api.api_id,
            uuid=api.uuid,
            title=api.title,
            overview=api.overview,
            version=api.version,
            revision=api.revision,
            documentation=bundled,
        )


def api_id_of(url: str) -> str:
    """The ``api_id`` of the document at ``url`` (see the module's description)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, url))


async def _fetch(outbound: Outbound, url: str) -> tuple[dict[str, Any] | None, str]:
    """The document at ``url``, or None and why it cannot be read; a document that cannot be
    fetched is a :class:`ConnectorError`."""
    response, body = await outbound.read(url)
    if response.status_code != 200:
        raise ConnectorError(f"{url} answered {response.status_code}")
    # parsing is CPU-bound (YAML near the size limit takes seconds): off the loop
    return await asyncio.to_thread(_read, body)


def _read(body: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        document = parse_document(body)
    except ValidationFailed as refused:
        return None, refused.detail
    problem = document_problem(document)
    return (None, problem) if problem is not None else (document, "")


def _remote_api(url: str, document: Mapping[str, Any]) -> RemoteApi:
    info = document["info"]  # checked by openapi_problem
    description = info.get("description")
    return RemoteApi(
        api_id=api_id_of(url),
        uuid=api_id_of(url),
        title=info["title"],
        overview=description if isinstance(description, str) else "",
        version=info["version"],
        revision=info["version"],
    )


def openapi_problem(body: bytes) -> str | None:
    """Why ``body`` is not an OpenAPI 3.0/3.1 document, or None when it is one."""
    try:
        document = parse_document(body)
    except ValidationFailed as refused:
        return refused.detail
    return document_problem(document)


def document_problem(document: Mapping[str, Any]) -> str | None:
    """Why an already parsed document (``parse_document``'s result) is not an OpenAPI
    3.0/3.1 document, or None when it is one: the catalogue checks the documents written in
    the portal with it."""
    version = document.get("openapi")
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        return "'openapi' is not 3.0.x or 3.1.x" if "openapi" in document else "no 'openapi'"
    info = document.get("info")
    if not isinstance(info, dict) or not isinstance(info.get("title"), str):
        return "no 'info.title'"
    if not isinstance(info.get("version"), str):
        return "no 'info.version' (a string)"
    keys = ("paths",) if version.startswith("3.0") else ("paths", "webhooks", "components")
    if not any(isinstance(document.get(key), dict) for key in keys):
        return "no " + " or ".join(f"'{key}'" for key in keys) + " object"
    return None


CONNECTOR = OpenApiConnector()
