"""The ``openapi`` connector: APIs described by OpenAPI documents served over HTTP(S).

The check fetches every document, reads it as the management service's import does
(``core/openapi_document.py``: size, depth, safe YAML without aliases) and requires an
object with ``openapi: 3.0.x|3.1.x``, ``info`` with a title and a version, and ``paths``
(or, for 3.1, ``webhooks`` or ``components``) as objects. This is a reading check, not a
full validation of the specification: enough to know the document is what it claims.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any

from portico.core.errors import ValidationFailed
from portico.core.openapi_document import parse_document
from portico.marketplace.connectors.base import (
    ConnectionField,
    Connector,
    ConnectorError,
    Outbound,
    capabilities,
)

# ASCII digits: ``\d`` also matches other scripts' digits, which are no OpenAPI version
_VERSION = re.compile(r"3\.[01]\.[0-9]+")


class OpenApiConnector(Connector):
    id = "openapi"
    label = "OpenAPI documents"
    description = "APIs read from OpenAPI 3.0 or 3.1 documents (JSON or YAML) at given URLs."
    capabilities = capabilities(apis=True)
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
